// The one error type of the service: every failure a client can see is a ServiceError, rendered as
// problem+json by the app's single onError handler.
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Stable machine-readable codes, the complete list (the README's error table lists each);
 *  the `type` URI of a problem is derived from them. */
export const ERROR_CODES = [
  "invalid_request",
  "invalid_json",
  "unauthorized",
  "insufficient_scope",
  "not_found",
  "model_not_found",
  "model_not_ready",
  "not_configured",
  "payload_too_large",
  "unsupported_media_type",
  "unprocessable_input",
  "invalid_image",
  "upstream_error",
  "upstream_timeout",
  "upstream_unavailable",
  "rate_limited",
  "context_length_exceeded",
  "internal_error",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ServiceErrorOptions {
  /** JSON pointer-ish path of the request field that failed, e.g. "inputs/0/shape". */
  field?: string;
  /** Further per-field problems (zod issues), returned as `errors`. */
  errors?: ReadonlyArray<{ field: string; detail: string }>;
  cause?: unknown;
  headers?: Record<string, string>;
}

export class ServiceError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly errors: ReadonlyArray<{ field: string; detail: string }> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    status: ContentfulStatusCode,
    code: ErrorCode,
    detail: string,
    options: ServiceErrorOptions = {},
  ) {
    super(detail, { cause: options.cause });
    this.name = "ServiceError";
    this.status = status;
    this.code = code;
    this.field = options.field;
    this.errors = options.errors;
    this.headers = options.headers;
  }
}
