// Attributions over the fraud model's feature groups: the batch leaves out the right columns,
// and the contributions add up to score − baseline for any model (exactly, by construction),
// and equal each group's own effect when the model is additive.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FraudScoringSchema } from "../../../../src/models/manifest";
import {
  attribute,
  attributionBatch,
  attributionBatcher,
  attributionRows,
  featureBlocks,
  PLAYERS,
  type Player,
} from "../../../../src/tasks/fraud/attribution";

const manifest = FraudScoringSchema.parse(
  JSON.parse(readFileSync("models/fraud-gru/manifest.json", "utf8")),
);
const { features, window } = manifest;

/** Scores of attributionRows() for a model given as a function of the absent players. */
const scoresOf = (model: (absent: ReadonlySet<Player>) => number) =>
  attributionRows().map((absent) => model(new Set(absent)));

describe("attribution", () => {
  it("splits the feature vector into the manifest's blocks, end to end", () => {
    const blocks = featureBlocks(features);
    expect(blocks.merchantState?.[0]).toBe(0);
    expect(blocks.amount).toEqual([features.count - 1, features.count]);
    expect(blocks.time).toEqual([features.count - 2, features.count - 1]);
  });

  it("zeroes exactly the absent players' columns, history as whole earlier steps", () => {
    const single = new Float32Array(window * features.count).fill(1);
    const { data, shape } = attributionBatch(single, window, features);
    const rows = attributionRows();
    expect(shape).toEqual([window, rows.length, features.count]);
    const blocks = featureBlocks(features);
    const value = (step: number, row: number, column: number) =>
      data[(step * rows.length + row) * features.count + column];
    rows.forEach((absent, row) => {
      const last = window - 1;
      expect(value(last, row, blocks.amount![0])).toBe(absent.includes("amount") ? 0 : 1);
      expect(value(last, row, blocks.mcc![0])).toBe(absent.includes("merchantCategory") ? 0 : 1);
      expect(value(last, row, blocks.merchantName![0])).toBe(absent.includes("merchant") ? 0 : 1);
      expect(value(0, row, blocks.amount![0])).toBe(absent.includes("history") ? 0 : 1);
    });
  });

  it("makes every row as its definition says: the window, its absent players' columns zeroed", () => {
    // Random values, so a row copied from the wrong step or row cannot pass.
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31 + 0.5;
    };
    const single = Float32Array.from({ length: window * features.count }, random);
    const blocks = featureBlocks(features);
    const columnsOf: Record<Player, string[]> = {
      amount: ["amount"],
      merchant: ["merchantState", "zip", "merchantName", "merchantCity"],
      merchantCategory: ["mcc"],
      entryMethod: ["useChip"],
      errors: ["errors"],
      time: ["time"],
      history: [],
    };
    const rows = attributionRows();
    const expected = new Float32Array(window * rows.length * features.count);
    rows.forEach((absent, r) => {
      for (let step = 0; step < window; step++) {
        const scored = step === window - 1;
        if (!scored && absent.includes("history")) continue;
        for (let column = 0; column < features.count; column++) {
          const zeroed =
            scored &&
            absent.some((player) =>
              columnsOf[player].some((block) => {
                const [start, end] = blocks[block] ?? [0, 0];
                return column >= start && column < end;
              }),
            );
          expected[(step * rows.length + r) * features.count + column] = zeroed
            ? 0
            : (single[step * features.count + column] ?? Number.NaN);
        }
      }
    });
    const batch = attributionBatcher(window, features);
    expect(batch(single).data).toEqual(expected);
    // The batcher keeps no state between batches.
    expect(batch(single).data).toEqual(expected);
  });

  it("gives an additive model's own effects, summing to score − baseline", () => {
    const effects: Record<Player, number> = {
      amount: 0.3,
      merchant: 0.1,
      merchantCategory: -0.05,
      entryMethod: 0.02,
      errors: 0,
      time: 0.01,
      history: 0.25,
    };
    const model = (absent: ReadonlySet<Player>) =>
      0.1 + PLAYERS.reduce((sum, p) => sum + (absent.has(p) ? 0 : effects[p]), 0);
    const { baseline, contributions } = attribute(scoresOf(model));
    expect(baseline).toBeCloseTo(0.1, 12);
    for (const player of PLAYERS) expect(contributions[player]).toBeCloseTo(effects[player], 12);
  });

  it("sums to score − baseline with interactions too, and splits a pair's joint effect evenly", () => {
    // Fires only when amount and history are both present (a big charge after a burst).
    const model = (absent: ReadonlySet<Player>) =>
      0.05 + (absent.has("amount") || absent.has("history") ? 0 : 0.8);
    const scores = scoresOf(model);
    const { baseline, contributions } = attribute(scores);
    const sum = PLAYERS.reduce((total, p) => total + contributions[p], 0);
    expect(Math.abs(sum - ((scores[0] ?? 0) - baseline))).toBeLessThanOrEqual(1e-12);
    expect(contributions.amount).toBeCloseTo(0.4, 12);
    expect(contributions.history).toBeCloseTo(0.4, 12);
    expect(contributions.errors).toBe(0);
  });
});
