// W3C Trace Context toward the origins: the request's `traceparent` (continued as a child, or a
// new trace when it has none or an invalid one), its `tracestate`, and its `x-request-id`, held
// for the request's async work so that every origin call it makes carries them.
import { AsyncLocalStorage } from "node:async_hooks";
import { toHex } from "../../protocols/hex";

export interface TraceContext {
  /** The client's `traceparent`, if any (checked before use). */
  traceparent?: string;
  tracestate?: string;
  /** The edge's request id (the client's `x-request-id` when it sent a valid one). */
  requestId?: string;
}

const storage = new AsyncLocalStorage<TraceContext>();

/** Runs `work` with `context` as the trace of every origin call it makes. */
export function withTrace<T>(context: TraceContext, work: () => T): T {
  return storage.run(context, work);
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

const hex = (bytes: number) => toHex(crypto.getRandomValues(new Uint8Array(bytes)));

/**
 * The headers of one origin call: `traceparent` with this call's own span id under the client's
 * trace (a new sampled trace without one), `tracestate` as received, `x-request-id`.
 */
export function originTraceHeaders(): Record<string, string> {
  const context = storage.getStore();
  if (context === undefined) return {};
  const parent = TRACEPARENT.exec(context.traceparent?.trim().toLowerCase() ?? "");
  const valid = parent !== null && parent[1] !== ZERO_TRACE && parent[2] !== ZERO_SPAN;
  const headers: Record<string, string> = {
    traceparent: valid ? `00-${parent[1]}-${hex(8)}-${parent[3]}` : `00-${hex(16)}-${hex(8)}-01`,
  };
  if (valid && context.tracestate) headers.tracestate = context.tracestate;
  if (context.requestId) headers["x-request-id"] = context.requestId;
  return headers;
}
