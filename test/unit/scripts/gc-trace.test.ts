// scripts/lib/gc-trace.mjs reads V8's --trace-gc-nvp records as workerd prints them: the Worker's
// isolate is the one whose global count is the largest; fullPauses picks that isolate's full
// collections out of a slice of lines (bench:fraud's cells) and `retained` sums what that
// isolate kept between its collections. The lines are workerd's output of 2026-12-02 under
// bench:fraud, each record cut to the fields the module reads.
import { describe, expect, it } from "vitest";
import {
  formatGc,
  fullPauses,
  gcSummary,
  records,
  retained,
} from "../../../scripts/lib/gc-trace.mjs";

const worker = "0x73f67fca6000";
const router = "0x73f67a28e000";
const record = (isolate: string, at: number, fields: Record<string, unknown>) =>
  `[14296:${isolate}:0]     ${at} ms: GC: ${JSON.stringify(fields)}`;
const scavenge = (pause: number, old: [number, number], global: [number, number]) => ({
  pause,
  gc: "s",
  reason: "allocation failure",
  start_old_gen_consumed_size: old[0],
  end_old_gen_consumed_size: old[1],
  start_global_consumed_size: global[0],
  end_global_consumed_size: global[1],
  global_allocation_limit: 67108864,
});
const lines = [
  record(worker, 167, scavenge(3.06, [8529456, 9154284], [14277498, 14902326])),
  record(router, 486, scavenge(0.791, [468956, 468956], [954164, 954164])),
  record(worker, 188, scavenge(6.35, [9418024, 11142192], [15166064, 16890232])),
  record(worker, 6852, {
    pause: 66.687,
    gc: "mc",
    reason: "global allocation limit",
    start_old_gen_consumed_size: 27765372,
    end_old_gen_consumed_size: 14011872,
    start_global_consumed_size: 62199254,
    end_global_consumed_size: 40093514,
    global_allocation_limit: 67108864,
    // V8's own phases (their sub-phases, e.g. mark.roots, are inside them and not counted again).
    mark: 9.004,
    "mark.roots": 0.22,
    clear: 4.368,
    evacuate: 1.788,
    sweep: 0.068,
    finish: 0.064,
    prologue: 0.015,
  }),
  record(worker, 6911, scavenge(2.533, [14497220, 14612660], [40488980, 40604420])),
  `[14296:${worker}:0]     6950 ms: GC: {"pause": 1.0, "gc": "s", cut short`,
  "some other line workerd printed",
];

describe("gc-trace", () => {
  it("finds the Worker's isolate, its full collections, what set them off and the sizes after", () => {
    const summary = gcSummary(lines);
    expect(summary.isolate).toBe(worker);
    expect(summary.full).toEqual([
      {
        ms: 66.687,
        reason: "global allocation limit",
        afterMb: 14011872 / 2 ** 20,
        globalAfterMb: 40093514 / 2 ** 20,
        globalLimitMb: 64,
      },
    ]);
    expect(summary.young).toEqual([3.06, 6.35, 2.533]);
    expect(formatGc(summary)).toMatchObject({
      full: 1,
      fullPausesMs: "67",
      reasons: "global allocation limit",
      liveAfterMb: "13.4",
      globalAfterMb: "38.2",
      globalLimitMb: "64",
      young: 3,
      youngMaxMs: "6.3",
    });
  });

  it("reads each record with its line and, for a full one, how long V8's own phases took", () => {
    const all = records(lines);
    expect(all.map(({ index }) => index)).toEqual([0, 1, 2, 3, 4]);
    const [full] = all.filter((record) => record.full);
    expect(full).toMatchObject({ index: 3, isolate: worker, ms: 66.687 });
    expect(full?.v8Ms).toBeCloseTo(9.004 + 4.368 + 1.788 + 0.068 + 0.064 + 0.015, 9);
    expect(all[0]?.v8Ms).toBe(0);
  });

  it("lists one isolate's full collections in a slice of the lines", () => {
    expect(fullPauses(lines, worker)).toEqual([66.687]);
    expect(fullPauses(lines.slice(0, 3), worker)).toEqual([]);
    expect(fullPauses(lines.slice(3), worker)).toEqual([66.687]);
    expect(fullPauses(lines, router)).toEqual([]);
    expect(fullPauses(lines, undefined)).toEqual([]);
  });

  it("sums what the isolate kept from one collection to the next, up to a full one's start", () => {
    const outside = (global: number, old: number) => global - old;
    expect(retained(lines.slice(0, 4), worker)).toEqual({
      heap: 11142192 - 9154284 + (27765372 - 11142192),
      outside:
        outside(16890232, 11142192) -
        outside(14902326, 9154284) +
        (outside(62199254, 27765372) - outside(16890232, 11142192)),
    });
    // After the full collection, growth counts from its end.
    expect(retained(lines.slice(3), worker)).toEqual({
      heap: 14612660 - 14011872,
      outside: outside(40604420, 14612660) - outside(40093514, 14011872),
    });
    expect(retained(lines, router)).toEqual({ heap: 0, outside: 0 });
  });
});
