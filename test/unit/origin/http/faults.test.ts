// The origin's fault injection (origin/http/faults.ts), used by the pool tests and benchmark:
// a streamed body's chunks held back, a chosen share of requests stalled before their first
// chunk, plain JSON answers untouched, and the settings checked at start.
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../../../origin/config";
import { injectFaults } from "../../../../origin/http/faults";

const encoder = new TextEncoder();

function app(faults: Parameters<typeof injectFaults>[0], random: () => number) {
  const hono = new Hono();
  hono.use("/stream", injectFaults(faults, random));
  hono.use("/json", injectFaults(faults, random));
  hono.get("/stream", () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const data of ["a", "b", "c"]) controller.enqueue(encoder.encode(`data: ${data}\n\n`));
        controller.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  hono.get("/json", (c) => c.json({ ok: true }));
  return hono;
}

/** Each chunk's arrival, in ms since the request. */
async function arrivals(response: Response): Promise<number[]> {
  const start = performance.now();
  const times: number[] = [];
  const reader = response.body!.getReader();
  for (;;) {
    const { done } = await reader.read();
    if (done) return times;
    times.push(performance.now() - start);
  }
}

/** The process's environment without any fault setting, plus `extra`. */
const envWith = (extra: Record<string, string> = {}) => ({
  ...process.env,
  ORIGIN_FAULT_CHUNK_DELAY_MS: undefined,
  ORIGIN_FAULT_STALL_MS: undefined,
  ORIGIN_FAULT_STALL_RATE: undefined,
  ORIGIN_FAULT_PREFILL_US_PER_TOKEN: undefined,
  ...extra,
});

describe("origin fault injection", () => {
  it("holds each streamed chunk back, and stalls a chosen request before its first", async () => {
    const slow = await arrivals(
      await app({ chunkDelayMs: 40, stallMs: 0, stallRate: 0 }, () => 0).request("/stream"),
    );
    expect(slow).toHaveLength(3);
    expect(slow[2]!).toBeGreaterThanOrEqual(115);
    const stalled = await arrivals(
      await app({ chunkDelayMs: 0, stallMs: 150, stallRate: 0.05 }, () => 0.01).request("/stream"),
    );
    expect(stalled[0]!).toBeGreaterThanOrEqual(145);
  });

  it("leaves the requests it did not pick, and JSON answers, as they are", async () => {
    const faults = { chunkDelayMs: 0, stallMs: 60_000, stallRate: 0.05 };
    const spared = await arrivals(await app(faults, () => 0.5).request("/stream"));
    expect(spared).toHaveLength(3);
    const json = await app({ chunkDelayMs: 60_000, stallMs: 0, stallRate: 0 }, () => 0).request(
      "/json",
    );
    expect(await json.json()).toEqual({ ok: true });
  });

  it("reads its settings from the environment, off by default, the rate within 0–1", () => {
    expect(readConfig(envWith()).faults).toEqual({ chunkDelayMs: 0, stallMs: 0, stallRate: 0 });
    expect(readConfig(envWith()).prefillFaultUsPerToken).toBe(0);
    expect(
      readConfig(envWith({ ORIGIN_FAULT_PREFILL_US_PER_TOKEN: "100" })).prefillFaultUsPerToken,
    ).toBe(100);
    expect(
      readConfig(
        envWith({
          ORIGIN_FAULT_CHUNK_DELAY_MS: "5",
          ORIGIN_FAULT_STALL_MS: "2000",
          ORIGIN_FAULT_STALL_RATE: "0.05",
        }),
      ).faults,
    ).toEqual({ chunkDelayMs: 5, stallMs: 2000, stallRate: 0.05 });
    expect(() => readConfig(envWith({ ORIGIN_FAULT_STALL_RATE: "2" }))).toThrow(
      /ORIGIN_FAULT_STALL_RATE/,
    );
  });
});
