// V8's `--trace-gc` lines (workerd started with the flag: workerd-bundle.mjs `traceGc`) summed for
// the isolate that kept the most: the Worker's, beside the small ones of Miniflare's entry Worker
// and assets router. workerd runs V8 with `--noincremental-marking` (src/workerd/jsg/setup.c++),
// so every full collection (Mark-Compact) is one pause of the thread that runs every isolate.
const LINE =
  /\[\d+:(0x[0-9a-f]+)(?::\d+)?\]\s+\d+ ms: (Scavenge|Mark-Compact|Minor Mark-Sweep)(?: \(reduce\))? ([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB,.*? ([\d.]+) \/ [\d.]+ ms/;

/**
 * The Worker's isolate's collections in `lines`: which isolate it is, full ones (count, pauses,
 * live heap after them) and young-generation ones (count, pauses).
 * @param {string[]} lines
 */
export function gcSummary(lines) {
  const byIsolate = new Map();
  for (const line of lines) {
    const match = LINE.exec(line);
    if (match === null) continue;
    const [, isolate, kind, , after, pause] = match;
    const entry = byIsolate.get(isolate) ?? { isolate, full: [], young: [], kept: 0 };
    const ms = Number(pause);
    if (kind === "Mark-Compact") {
      entry.full.push({ ms, afterMb: Number(after) });
    } else entry.young.push(ms);
    entry.kept = Math.max(entry.kept, Number(after));
    byIsolate.set(isolate, entry);
  }
  const [worker] = [...byIsolate.values()].sort((a, b) => b.kept - a.kept);
  return worker ?? { isolate: undefined, full: [], young: [], kept: 0 };
}

/**
 * The pauses, in ms, of `isolate`'s full collections among `lines` (e.g. the lines printed while
 * one cell's decisions were in flight; `isolate` from gcSummary over the whole run).
 * @param {string[]} lines @param {string | undefined} isolate
 */
export function fullPauses(lines, isolate) {
  const pauses = [];
  for (const line of lines) {
    const match = LINE.exec(line);
    if (match !== null && match[1] === isolate && match[2] === "Mark-Compact")
      pauses.push(Number(match[5]));
  }
  return pauses;
}

/** One summary as the benchmarks print it. */
export function formatGc({ full, young }) {
  const sorted = (values) => [...values].sort((a, b) => a - b);
  const pauses = sorted(full.map(({ ms }) => ms));
  const live = sorted(full.map(({ afterMb }) => afterMb));
  const youngSorted = sorted(young);
  const range = (values, digits) =>
    values.length === 0 ? "-" : `${values[0].toFixed(digits)}–${values.at(-1).toFixed(digits)}`;
  return {
    full: full.length,
    fullPausesMs: pauses.map((ms) => ms.toFixed(0)).join(", ") || "-",
    liveAfterMb: range(live, 1),
    young: young.length,
    youngTotalMs: young.reduce((sum, ms) => sum + ms, 0).toFixed(0),
    youngMaxMs: youngSorted.length === 0 ? "-" : youngSorted.at(-1).toFixed(1),
  };
}
