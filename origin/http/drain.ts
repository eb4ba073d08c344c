// Graceful shutdown: once draining, new work is refused with 503 and Retry-After and the
// readiness probes answer 503; when the grace period ends, `expired` fires and the requests
// still running end as their protocol ends an error (server.ts drives the sequence).
import type { MiddlewareHandler } from "hono";
import { ServiceError } from "../../src/errors/service-error";

export class Drain {
  draining = false;
  private readonly expiry = new AbortController();
  /** Fires when the grace period is over: engines drop what is left, streams end with an error. */
  readonly expired: AbortSignal = this.expiry.signal;

  /**
   * @param retryAfterSeconds what refused clients are told to wait (another replica serves them)
   */
  constructor(private readonly retryAfterSeconds = 5) {}

  begin(): void {
    this.draining = true;
  }

  expire(): void {
    this.draining = true;
    this.expiry.abort();
  }

  /** The error a request refused or cut by the drain gets. */
  error(): ServiceError {
    return new ServiceError(503, "model_not_ready", "The origin is shutting down", {
      headers: { "retry-after": String(this.retryAfterSeconds) },
    });
  }

  /** Refuses new work (every POST) while draining; probes, metadata and /metrics still answer. */
  admission(): MiddlewareHandler {
    return async (c, next) => {
      if (this.draining && c.req.method === "POST") throw this.error();
      await next();
    };
  }
}
