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

/** Deadlines under `caller`; each phase's timeout is a fresh AbortSignal.timeout. */
export function deadlines(caller: AbortSignal | undefined): Deadlines {
  const own = new AbortController();
  const signal = caller === undefined ? own.signal : AbortSignal.any([caller, own.signal]);
  let current: { signal: AbortSignal; onAbort: () => void } | undefined;
  let expired: string | undefined;
  const drop = () => {
    if (current !== undefined) current.signal.removeEventListener("abort", current.onAbort);
    current = undefined;
  };
  return {
    signal,
    phase(ms, failure) {
      drop();
      const timeout = AbortSignal.timeout(ms);
      const onAbort = () => {
        expired = failure;
        own.abort(new ServiceError(504, "upstream_timeout", `The GPU origin ${failure} within ${ms} ms`));
      };
      timeout.addEventListener("abort", onAbort, { once: true });
      current = { signal: timeout, onAbort };
    },
    clear: drop,
    abort(reason) {
      drop();
      own.abort(reason);
    },
    timedOut: () => expired !== undefined,
  };
}
