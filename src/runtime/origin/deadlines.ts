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
  /**
   * What a failed fetch or body read under these deadlines failed with: the deadline's 504
   * when one fired — workerd rejects a read that the deadline aborted with its own error
   * wrapping the reason, which would otherwise surface as a 500 — else `caught`.
   */
  errorOf(caught: unknown): unknown;
}

/**
 * Deadlines under `caller`. One timer per call: a new phase only moves the due time when
 * it falls at or after the time the timer is armed for (a timer that fires early re-arms
 * for the rest), and re-arms only when it falls before — so connect → first token → idle
 * gap (30 s, 60 s, 30 s from successive moments) arms one timer, and renewing the idle gap
 * per streamed chunk arms none. A fresh AbortSignal.timeout and listener per chunk, or a
 * setTimeout per phase (each one goes through workerd's Node-compatible timers), cost a
 * measurable share of the edge's CPU. Date.now() in a Worker advances with I/O, which is
 * exactly when a phase is renewed.
 */
export function deadlines(caller: AbortSignal | undefined): Deadlines {
  const own = new AbortController();
  const signal = caller === undefined ? own.signal : AbortSignal.any([caller, own.signal]);
  let current: { ms: number; failure: string; due: number } | undefined;
  let timer: { handle: ReturnType<typeof setTimeout>; firesAt: number } | undefined;
  let expired: string | undefined;
  const drop = () => {
    if (timer !== undefined) clearTimeout(timer.handle);
    timer = undefined;
    current = undefined;
  };
  const arm = (ms: number) => {
    timer = {
      firesAt: Date.now() + ms,
      handle: setTimeout(() => {
        timer = undefined;
        if (current === undefined) return;
        const left = current.due - Date.now();
        if (left > 0) {
          arm(left);
          return;
        }
        expired = current.failure;
        own.abort(
          new ServiceError(
            504,
            "upstream_timeout",
            `The GPU origin ${current.failure} within ${current.ms} ms`,
          ),
        );
      }, ms),
    };
  };
  return {
    signal,
    phase(ms, failure) {
      const due = Date.now() + ms;
      if (current !== undefined && current.ms === ms && current.failure === failure) {
        current.due = due;
        return;
      }
      current = { ms, failure, due };
      if (timer !== undefined && timer.firesAt <= due) return;
      if (timer !== undefined) clearTimeout(timer.handle);
      arm(ms);
    },
    clear: drop,
    abort(reason) {
      drop();
      own.abort(reason);
    },
    timedOut: () => expired !== undefined,
    errorOf: (caught) => (expired !== undefined ? own.signal.reason : caught),
  };
}
