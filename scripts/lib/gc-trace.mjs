// V8's `--trace-gc-nvp` lines (workerd started with `--trace-gc --trace-gc-nvp`:
// workerd-bundle.mjs `traceGc`), one JSON record a collection, read for the isolate that keeps the
// most: the Worker's, beside the small ones of Miniflare's entry Worker and assets router. workerd
// runs V8 with `--noincremental-marking` (src/workerd/jsg/setup.c++), so every full collection
// (Mark-Compact) is one pause of the thread that runs every isolate.
//
// Two sizes per record: V8's old generation, and V8's "global" count, which is the old generation
// plus what it counts outside its heap (workerd's C++ objects, ArrayBuffers such as ORT's WASM
// memory, compiled WASM code). A full collection starts when either reaches its limit; `reason`
// says which ("global allocation limit", "allocation failure", ...).
const LINE = /\[\d+:(0x[0-9a-f]+)(?::\d+)?\]\s+\d+ ms: GC: (\{.*\})\s*$/;

/** V8's own phases of a full collection, as --trace-gc-nvp names them (ms each). */
const V8_PHASES = ["prologue", "mark", "clear", "evacuate", "sweep", "finish", "epilogue"];

/**
 * The records of `lines` that parse, each with the isolate that printed it and its line's index;
 * `v8Ms`: the time V8's own phases took (of a full one; the rest of its pause is the embedder's:
 * workerd's C++ objects swept and destroyed).
 */
export function records(lines) {
  const out = [];
  for (const [index, line] of lines.entries()) {
    const match = LINE.exec(line);
    if (match === null) continue;
    let record;
    try {
      record = JSON.parse(match[2]);
    } catch {
      continue;
    }
    out.push({
      index,
      v8Ms: V8_PHASES.reduce((sum, phase) => sum + (record[phase] ?? 0), 0),
      isolate: match[1],
      full: record.gc === "mc",
      ms: record.pause,
      reason: record.reason,
      heap: { start: record.start_old_gen_consumed_size, end: record.end_old_gen_consumed_size },
      global: {
        start: record.start_global_consumed_size,
        end: record.end_global_consumed_size,
        limit: record.global_allocation_limit,
      },
    });
  }
  return out;
}

const MB = 1024 * 1024;

/**
 * The Worker's isolate's collections in `lines`: which isolate it is, full ones (pause, reason,
 * old generation and global count after them, the global limit) and young-generation ones
 * (pauses).
 * @param {string[]} lines
 */
export function gcSummary(lines) {
  const byIsolate = new Map();
  for (const record of records(lines)) {
    const entry = byIsolate.get(record.isolate) ?? {
      isolate: record.isolate,
      full: [],
      young: [],
      kept: 0,
    };
    if (record.full)
      entry.full.push({
        ms: record.ms,
        reason: record.reason,
        afterMb: record.heap.end / MB,
        globalAfterMb: record.global.end / MB,
        globalLimitMb: record.global.limit / MB,
      });
    else entry.young.push(record.ms);
    entry.kept = Math.max(entry.kept, record.global.end / MB);
    byIsolate.set(record.isolate, entry);
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
  return records(lines)
    .filter((record) => record.isolate === isolate && record.full)
    .map(({ ms }) => ms);
}

/**
 * What `isolate` kept between its collections among `lines`, in bytes: how far its old generation
 * and the rest of its global count grew from the end of one collection to the end of the next
 * young one (promoted and directly old-allocated objects) or the start of the next full one. Over
 * a cell, per decision, it is what each decision leaves for the full collection to free.
 * @param {string[]} lines @param {string | undefined} isolate
 */
export function retained(lines, isolate) {
  const own = records(lines).filter((record) => record.isolate === isolate);
  let heap = 0;
  let outside = 0;
  for (let i = 1; i < own.length; i++) {
    const [before, after] = [own[i - 1], own[i]];
    const at = after.full ? "start" : "end";
    heap += after.heap[at] - before.heap.end;
    outside += after.global[at] - after.heap[at] - (before.global.end - before.heap.end);
  }
  return { heap, outside };
}

/** One summary as the benchmarks print it. */
export function formatGc({ full, young }) {
  const sorted = (values) => [...values].sort((a, b) => a - b);
  const pauses = sorted(full.map(({ ms }) => ms));
  const range = (values, digits) => {
    const ordered = sorted(values);
    if (ordered.length === 0) return "-";
    const [low, high] = [ordered[0].toFixed(digits), ordered.at(-1).toFixed(digits)];
    return low === high ? low : `${low}–${high}`;
  };
  const youngSorted = sorted(young);
  return {
    full: full.length,
    fullPausesMs: pauses.map((ms) => ms.toFixed(0)).join(", ") || "-",
    reasons: [...new Set(full.map(({ reason }) => reason))].join("; ") || "-",
    liveAfterMb: range(
      full.map(({ afterMb }) => afterMb),
      1,
    ),
    globalAfterMb: range(
      full.map(({ globalAfterMb }) => globalAfterMb),
      1,
    ),
    globalLimitMb: range(
      full.map(({ globalLimitMb }) => globalLimitMb),
      0,
    ),
    young: young.length,
    youngTotalMs: young.reduce((sum, ms) => sum + ms, 0).toFixed(0),
    youngMaxMs: youngSorted.length === 0 ? "-" : youngSorted.at(-1).toFixed(1),
  };
}
