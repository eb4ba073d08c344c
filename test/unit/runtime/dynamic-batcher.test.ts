// The dynamic batcher: calls of one turn run as one batch (at most maxBatch), each answered with
// its own output; a failed run fails only its batch; a call that leaves before its batch runs is
// not in it.
import { describe, expect, it } from "vitest";
import { batchCounts, dynamicBatcher } from "../../../src/runtime/dynamic-batcher";

/** A batcher that doubles numbers and records each batch it ran. */
function doubler(maxBatch: number, name = "test.doubler") {
  const batches: number[][] = [];
  const call = dynamicBatcher(
    async (items: readonly number[]) => {
      batches.push([...items]);
      return items.map((item) => item * 2);
    },
    { name, maxBatch },
  );
  return { call, batches };
}

describe("dynamicBatcher", () => {
  it("runs the calls of one turn as one batch, each answered with its own output", async () => {
    const { call, batches } = doubler(8);
    expect(await Promise.all([1, 2, 3].map((n) => call(n)))).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it("runs a full batch at once and the rest on the next turn", async () => {
    const { call, batches } = doubler(4);
    const answers = Promise.all([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => call(n)));
    // The first four ran as the fourth arrived, before any timer.
    expect(batches).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
    ]);
    expect(await answers).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20]);
    expect(batches).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
      [9, 10],
    ]);
  });

  it("gives a call of a later turn a batch of its own", async () => {
    const { call, batches } = doubler(8);
    expect(await call(1)).toBe(2);
    expect(await call(2)).toBe(4);
    expect(batches).toEqual([[1], [2]]);
  });

  it("fails every call of a failed run, and only those", async () => {
    let runs = 0;
    const call = dynamicBatcher(
      async (items: readonly number[]) => {
        if (runs++ === 0) throw new Error("the model failed");
        return items;
      },
      { name: "test.failing", maxBatch: 8 },
    );
    const first = [call(1), call(2)].map((answer) => answer.catch((error: Error) => error.message));
    expect(await Promise.all(first)).toEqual(["the model failed", "the model failed"]);
    expect(await call(3)).toBe(3);
  });

  it("fails a batch whose run answers the wrong number of outputs", async () => {
    const call = dynamicBatcher(async (items: readonly number[]) => items.slice(1), {
      name: "test.short",
      maxBatch: 8,
    });
    await expect(Promise.all([call(1), call(2)])).rejects.toThrow("a batch of 2 got 1 outputs");
  });

  it("leaves out a call whose signal aborts before its batch runs", async () => {
    const { call, batches } = doubler(8);
    const leaving = new AbortController();
    const answers = [call(1), call(2, leaving.signal), call(3)];
    leaving.abort(new Error("the client left"));
    await expect(answers[1]).rejects.toThrow("the client left");
    expect(await Promise.all([answers[0], answers[2]])).toEqual([2, 6]);
    expect(batches).toEqual([[1, 3]]);
    await expect(call(4, leaving.signal)).rejects.toThrow("the client left");
    expect(batches).toEqual([[1, 3]]);
  });

  it("answers a call whose signal aborts after its batch ran", async () => {
    const { call } = doubler(2);
    const late = new AbortController();
    const answers = Promise.all([call(1, late.signal), call(2)]);
    late.abort();
    expect(await answers).toEqual([2, 4]);
  });

  it("runs a call alone once the batch it waits on is taken as lost", async () => {
    const batches: number[][] = [];
    const call = dynamicBatcher(
      (items: readonly number[]) => {
        batches.push([...items]);
        // The first run never settles, as when the request that ran it is cancelled mid-run.
        return batches.length === 1 ? new Promise<number[]>(() => {}) : Promise.resolve(items);
      },
      { name: "test.lost", maxBatch: 8, lostAfterMs: 30 },
    );
    // Call 1's turn comes first and runs the batch; its request is gone (never awaited here).
    void call(1);
    expect(await call(2)).toBe(2);
    expect(batches).toEqual([[1, 2], [2]]);
  });

  it("counts runs and calls by name for /metrics", async () => {
    const { call } = doubler(8, "test.counted");
    await Promise.all([1, 2, 3].map((n) => call(n)));
    await call(4);
    expect(new Map(batchCounts()).get("test.counted")).toEqual({ runs: 2, calls: 4 });
  });
});
