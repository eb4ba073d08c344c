// A request's n choices streamed as one (src/routes/http/event-stream.ts mergeEvents): every
// choice's events, first events included, each with its index, in the order they come; one
// choice failing fails the merged stream and aborts the others; leaving early aborts them all.
import { describe, expect, it } from "vitest";
import {
  mergeEvents,
  startEvents,
  type StartedEvents,
} from "../../../../src/routes/http/event-stream";

const tick = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), {
      once: true,
    });
  });

/**
 * A choice that yields `name:0 … name:(count − 1)`, `every` ms apart, then perhaps throws; records
 * whether it was aborted.
 */
function choice(name: string, count: number, every: number, log: string[], failAfter?: number) {
  return (signal: AbortSignal) =>
    (async function* () {
      try {
        for (let i = 0; i < count; i += 1) {
          if (i > 0) await tick(every, signal);
          if (failAfter !== undefined && i === failAfter) throw new Error(`${name} failed`);
          yield `${name}:${i}`;
        }
      } finally {
        if (signal.aborted) log.push(`${name} aborted`);
      }
    })();
}

async function started(
  _log: string[],
  ...choices: ReturnType<typeof choice>[]
): Promise<StartedEvents<string>[]> {
  return Promise.all(
    choices.map((generate) => startEvents(generate, new AbortController().signal)),
  );
}

describe("mergeEvents", () => {
  it(
    "yields every choice's events with its " + "index, first events first, then as they come",
    async () => {
      const log: string[] = [];
      const merged = mergeEvents(
        await started(log, choice("a", 3, 30, log), choice("b", 3, 5, log)),
      );
      const seen: (readonly [number, string])[] = [];
      for await (const event of merged.events) seen.push(event);
      expect(seen.slice(0, 2)).toEqual([
        [0, "a:0"],
        [1, "b:0"],
      ]);
      expect(seen.slice(2, 4)).toEqual([
        [1, "b:1"],
        [1, "b:2"],
      ]);
      expect(seen.slice(4)).toEqual([
        [0, "a:1"],
        [0, "a:2"],
      ]);
      expect(log).toEqual([]);
    },
  );

  it("a choice that fails fails the merged stream and aborts the others", async () => {
    const log: string[] = [];
    const merged = mergeEvents(
      await started(log, choice("a", 50, 20, log), choice("b", 5, 5, log, 2)),
    );
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const [, event] of merged.events) seen.push(event);
      })(),
    ).rejects.toThrow("b failed");
    expect(seen).toEqual(["a:0", "b:0", "b:1"]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(log).toEqual(["a aborted"]);
  });

  it("leaving early aborts every choice still going; abort() aborts them all", async () => {
    const log: string[] = [];
    const merged = mergeEvents(
      await started(log, choice("a", 50, 5, log), choice("b", 50, 5, log)),
    );
    for await (const [index] of merged.events) if (index === 1) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(log.sort()).toEqual(["a aborted", "b aborted"]);
    const other: string[] = [];
    const again = mergeEvents(
      await started(other, choice("c", 50, 5, other), choice("d", 50, 5, other)),
    );
    again.abort();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(other.sort()).toEqual(["c aborted", "d aborted"]);
  });
});
