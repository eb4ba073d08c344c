// Attributions of a fraud score over the model's feature groups: each group of the scored
// window is replaced by the encoding of "absent" (all zeros, what padding and unseen values
// look like to the model) along two opposite orders, and each group's contribution is its
// mean step along the two paths, so the contributions add up to score − baseline exactly.
import type { FraudFeatures } from "../../models/manifest";

/** The groups attributions are given over: parts of the scored transaction, and its history. */
export const PLAYERS = [
  "amount",
  "merchant",
  "merchantCategory",
  "entryMethod",
  "errors",
  "time",
  "history",
] as const;
export type Player = (typeof PLAYERS)[number];

/** Columns [start, end) of each feature block in one transaction's feature vector. */
export function featureBlocks(features: FraudFeatures): Record<string, [number, number]> {
  const digits = (column: { digits: readonly (readonly number[])[] }) =>
    column.digits.reduce((width, values) => width + values.length, 0);
  const widths: [string, number][] = [
    ["merchantState", digits(features.merchantState)],
    ["zip", digits(features.zip)],
    ["merchantName", digits(features.merchantName)],
    ["merchantCity", digits(features.merchantCity)],
    ["mcc", digits(features.mcc)],
    ["useChip", features.useChip.classes.length],
    ["errors", features.errors.classes.length],
    ["time", 1],
    ["amount", 1],
  ];
  const blocks: Record<string, [number, number]> = {};
  let start = 0;
  for (const [name, width] of widths) {
    blocks[name] = [start, start + width];
    start += width;
  }
  if (start !== features.count)
    throw new Error(`feature blocks span ${start} columns, manifest says ${features.count}`);
  return blocks;
}

/** The scored step's column ranges each player covers (history covers whole earlier steps). */
function playerColumns(features: FraudFeatures): Record<Player, [number, number][]> {
  const b = featureBlocks(features);
  const at = (name: string): [number, number] => b[name] ?? [0, 0];
  return {
    amount: [at("amount")],
    merchant: [at("merchantState"), at("zip"), at("merchantName"), at("merchantCity")],
    merchantCategory: [at("mcc")],
    entryMethod: [at("useChip")],
    errors: [at("errors")],
    time: [at("time")],
    history: [],
  };
}

/** The coalitions each row of the batch leaves out: row 0 is the window itself. */
export function attributionRows(): Player[][] {
  const forward = PLAYERS.map((_, k) => PLAYERS.slice(0, k + 1));
  const reverse = PLAYERS.map((_, k) => PLAYERS.slice(PLAYERS.length - 1 - k));
  // The last row of each path is every player absent (the baseline): kept once.
  return [[], ...forward, ...reverse.slice(0, -1)];
}

/** The rows, made once: every batch and every attribution reads them. */
const ROWS = attributionRows();

/**
 * A function that makes the batch [window, rows, F] for one scored window [window, 1, F]: row r
 * has the players of attributionRows()[r] set to zeros. Which columns each row zeroes is worked
 * out here, once per scorer; each batch is then plain copies and fills, with no views or arrays
 * made per row (a decision makes one batch).
 */
export function attributionBatcher(
  window: number,
  features: FraudFeatures,
): (single: Float32Array) => { data: Float32Array; shape: [number, number, number] } {
  const width = features.count;
  const { rows, withHistory, scoredRows } = rowLayout(features);
  const shape: [number, number, number] = [window, rows.length, width];
  return (single) => {
    const data = new Float32Array(window * rows.length * width);
    const rowAt = (step: number, r: number) => (step * rows.length + r) * width;
    for (let step = 0; step < window - 1; step++) {
      // An earlier step: kept where history is present, zeros (as made) where it is absent; once
      // into row 0, then copied within the batch.
      const first = rowAt(step, 0);
      data.set(single.subarray(step * width, (step + 1) * width), first);
      for (const r of withHistory) if (r > 0) data.copyWithin(rowAt(step, r), first, first + width);
    }
    scoredRows(data, rowAt(window - 1, 0), single.subarray((window - 1) * width));
    return { data, shape };
  };
}

/** Each row's history flag and zeroed columns, and a writer of the scored step's rows. */
function rowLayout(features: FraudFeatures) {
  const width = features.count;
  const columns = playerColumns(features);
  const rows = ROWS.map((absent) => ({
    history: !absent.includes("history"),
    zeroed: absent.flatMap((player) => columns[player]),
  }));
  return {
    rows,
    withHistory: rows.flatMap(({ history }, r) => (history ? [r] : [])),
    /** Writes the scored step `scored` [F] as every row's, its absent players zeroed, from `at`. */
    scoredRows(data: Float32Array, at: number, scored: Float32Array): void {
      data.set(scored, at);
      rows.forEach(({ zeroed }, r) => {
        const to = at + r * width;
        if (r > 0) data.copyWithin(to, at, at + width);
        for (const [start, end] of zeroed) data.fill(0, to + start, to + end);
      });
    },
  };
}

/**
 * The attribution batch as one run of the model cut at its scored step (the model's attribution
 * graph, scripts/fraud/split-attribution.py): the rows differ only in that step, and their
 * earlier steps are either the card's history or all zeros. So the graph runs two prefixes (the
 * window, and no history at all) up to the scored step, and every row's scored step from the
 * state its prefix left: the same scores as the whole batch, with a seventh of its recurrent work.
 * Several windows stack into one run (`batch`): window j's prefixes are batch rows 2j and 2j + 1,
 * its attribution rows are rows j·R … j·R + R − 1 of the step, and every op is row-wise, so each
 * window's scores are what it gets alone.
 */
export function attributionSplitter(window: number, features: FraudFeatures) {
  const width = features.count;
  const { rows, scoredRows } = rowLayout(features);
  /** The prefix each row starts from: 0, the window's history; 1, none. */
  const prefixOf = rows.map(({ history }) => (history ? 0 : 1));
  /** Released inputs by batch size, each taken by one batch at a time (at most 8 sizes). */
  const spare = new Map<
    number,
    { prefix: Float32Array; step: Float32Array; stateRows: BigInt64Array }
  >();
  return {
    /** Attribution rows per window: its scores are `scores[j·rows … (j + 1)·rows)`. */
    rows: rows.length,
    /**
     * The run's inputs for windows [window, 1, F] each: `transactions` [window, 2k, F] (each
     * window's history, then no history: zeros), `step` [1, k·rows, F] (every row's scored step)
     * and `stateRows` [k·rows] (which prefix each row starts from). `release()` once the run that
     * reads them has settled: the next batch of k windows then refills the same arrays rather than
     * leaving ~20 KB a decision for the isolate's full collections (docs/fraud.md "Latency").
     */
    batch(singles: readonly Float32Array[]) {
      const k = singles.length;
      const kept = spare.get(k);
      spare.delete(k);
      // Reused arrays need no clearing: every batch of k overwrites the same cells (rows 2j,
      // every step row, every state row) and never writes the no-history rows 2j + 1.
      const prefix = kept?.prefix ?? new Float32Array(window * 2 * k * width);
      const step = kept?.step ?? new Float32Array(k * rows.length * width);
      const stateRows = kept?.stateRows ?? new BigInt64Array(k * rows.length);
      singles.forEach((single, j) => {
        for (let t = 0; t < window; t++)
          prefix.set(single.subarray(t * width, (t + 1) * width), (t * 2 * k + 2 * j) * width);
        scoredRows(step, j * rows.length * width, single.subarray((window - 1) * width));
        prefixOf.forEach((p, r) => {
          stateRows[j * rows.length + r] = BigInt(2 * j + p);
        });
      });
      return {
        transactions: { data: prefix, shape: [window, 2 * k, width] },
        step: { data: step, shape: [1, k * rows.length, width] },
        stateRows: { data: stateRows, shape: [k * rows.length] },
        release: () => {
          spare.set(k, { prefix, step, stateRows });
        },
      };
    },
  };
}

/** One batch, as attributionBatcher(window, features) makes it (tests, one-off scripts). */
export function attributionBatch(
  single: Float32Array,
  window: number,
  features: FraudFeatures,
): { data: Float32Array; shape: [number, number, number] } {
  return attributionBatcher(window, features)(single);
}

export interface Attribution {
  /** The score with every group absent. */
  baseline: number;
  /** Per player: its mean step along the two orders; they sum to score − baseline. */
  contributions: Record<Player, number>;
}

/** Contributions from the scores of attributionRows(), in that order. */
export function attribute(scores: ArrayLike<number>): Attribution {
  const n = PLAYERS.length;
  const at = (r: number) => scores[r] ?? Number.NaN;
  const baseline = at(n); // the forward path's last row: all absent
  const contributions = {} as Record<Player, number>;
  PLAYERS.forEach((player, i) => {
    // Forward: player i leaves after players 0..i-1 (row i → row i+1).
    const forward = at(i) - at(i + 1);
    // Reverse: player i leaves after players n-1..i+1, its step k = n-1-i (row k → row k+1,
    // rows n+1.. hold the reverse path, row 0 its start, row n its end).
    const k = n - 1 - i;
    const reverseRow = (step: number) => (step === 0 ? 0 : step === n ? n : n + step);
    const reverse = at(reverseRow(k)) - at(reverseRow(k + 1));
    contributions[player] = (forward + reverse) / 2;
  });
  if (ROWS.length !== 2 * n) throw new Error("attribution rows and players disagree");
  return { baseline, contributions };
}
