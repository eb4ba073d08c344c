// Phase deadlines for a call to the origin, composed with the caller's signal through
// AbortSignal.any: the fetch and its body stream get one signal that fires when the client
// leaves or when the current phase (connect, first token, idle gap) runs out.
import { ServiceError } from "../../errors/service-error";

export interface Deadlines {
  /** Aborts on the caller's signal or on the current phase's deadline. */
  readonly signal: AbortSignal;
  /** Starts a new phase: the previous deadline is dropped, this one runs from now.
   * `failure` completes "The GPU origin …", e.g. "did not answer". */
  phase(ms: number, failure: string): void;
  /** Ends every deadline (the call finished); the caller's signal still counts. */
  clear(): void;
  /** Aborts the call (the consumer stopped reading). */
  abort(reason?: unknown): void;
  /** True when the last abort was a deadline, not the caller. */
  timedOut(): boolean;
}

/**
 * Deadlines under `caller`. One timer at a time: renewing the same phase (the idle gap,
 * once per streamed chunk) only moves its due time, and a timer that fires early re-arms
 * for the rest — a fresh AbortSignal.timeout and listener per chunk cost a measurable
 * share of the edge's CPU per token. Date.now() in a Worker advances with I/O, which is
 * exactly when a phase is renewed.
 */
export function deadlines(caller: AbortSignal | undefined): Deadlines {
  const own = new AbortController();
  const signal = caller === undefined ? own.signal : AbortSignal.any([caller, own.signal]);
  let current: { ms: number; failure: string; due: number; timer: ReturnType<typeof setTimeout> } | undefined;
  let expired: string | undefined;
  const drop = () => {
    if (current !== undefined) clearTimeout(current.timer);
    current = undefined;
  };
  const arm = (ms: number): ReturnType<typeof setTimeout> =>
    setTimeout(() => {
      if (current === undefined) return;
      const left = current.due - Date.now();
      if (left > 0) {
        current.timer = arm(left);
        return;
      }
      expired = current.failure;
      own.abort(new ServiceError(504, "upstream_timeout", `The GPU origin ${current.failure} within ${current.ms} ms`));
    }, ms);
  return {
    signal,
    phase(ms, failure) {
      if (current !== undefined && current.ms === ms && current.failure === failure) {
        current.due = Date.now() + ms;
        return;
      }
      drop();
      current = { ms, failure, due: Date.now() + ms, timer: arm(ms) };
    },
    clear: drop,
    abort(reason) {
      drop();
      own.abort(reason);
    },
    timedOut: () => expired !== undefined,
  };
}
