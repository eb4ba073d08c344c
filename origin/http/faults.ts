// Fault injection for tests and benchmarks of what sits in front of the origin (the edge's
// pools): each streamed completion chunk held back a while (a slower GPU), and a share of
// requests stalled before their first chunk. Off unless ORIGIN_FAULT_* is set.
import type { MiddlewareHandler } from "hono";

export interface Faults {
  /** Milliseconds each chunk of a streamed body is held back. */
  chunkDelayMs: number;
  /** Milliseconds a stalled request waits before its first chunk. */
  stallMs: number;
  /** Share of requests (0–1) that stall. */
  stallRate: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether any fault is configured. */
export const faulty = (faults: Faults) =>
  faults.chunkDelayMs > 0 || (faults.stallMs > 0 && faults.stallRate > 0);

/** Delays the streamed bodies of the routes it guards as `faults` says. */
export function injectFaults(faults: Faults, random = Math.random): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const body = c.res.body;
    if (body === null || !c.res.headers.get("content-type")?.startsWith("text/event-stream"))
      return;
    let stall = faults.stallMs > 0 && random() < faults.stallRate;
    const delayed = body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        async transform(chunk, controller) {
          if (stall) {
            stall = false;
            await sleep(faults.stallMs);
          }
          if (faults.chunkDelayMs > 0) await sleep(faults.chunkDelayMs);
          controller.enqueue(chunk);
        },
      }),
    );
    c.res = new Response(delayed, c.res);
  };
}
