// Problem details rendering: one place turns any thrown value into application/problem+json.
import { HTTPException } from "hono/http-exception";
import { z } from "zod";
import { ServiceError } from "./service-error";

const TITLES: Record<ServiceError["code"], string> = {
  invalid_request: "Invalid request",
  invalid_json: "Malformed JSON body",
  unauthorized: "Unauthorized",
  insufficient_scope: "Insufficient scope",
  not_found: "Not found",
  model_not_found: "Model not found",
  model_not_ready: "Model not ready",
  not_configured: "Not configured",
  payload_too_large: "Payload too large",
  unsupported_media_type: "Unsupported media type",
  unprocessable_input: "Input the model cannot take",
  invalid_image: "Invalid image",
  upstream_error: "Upstream error",
  upstream_timeout: "Upstream timeout",
  upstream_unavailable: "Upstream unavailable",
  rate_limited: "Too many requests",
  context_length_exceeded: "Context length exceeded",
  internal_error: "Internal error",
};

/** Maps Hono's own exceptions (e.g. from bodyLimit) onto the service's error type. */
export function toServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  // Input that passed its route's schema but not a mapping onto a task's type (e.g. a
  // provider payload whose timestamp is in the future) is still the caller's input.
  if (error instanceof z.ZodError) {
    const [issue] = error.issues;
    const field = issue?.path.map(String).join(".") || "body";
    return new ServiceError(400, "invalid_request", `${field}: ${issue?.message ?? "invalid"}`, {
      field,
      cause: error,
    });
  }
  if (error instanceof HTTPException) {
    // Hono's JSON validator: malformed JSON is `invalid_json` on every route, as readJson says it.
    if (error.status === 400 && /malformed json/i.test(error.message)) {
      return new ServiceError(400, "invalid_json", "The request body is not valid JSON", {
        field: "body",
        cause: error,
      });
    }
    if (error.status === 413)
      return new ServiceError(
        413,
        "payload_too_large",
        error.message || "Request body is too large",
      );
    if (error.status === 401)
      return new ServiceError(401, "unauthorized", error.message || "Unauthorized");
    if (error.status === 404)
      return new ServiceError(404, "not_found", error.message || "Not found");
    if (error.status === 415) {
      return new ServiceError(
        415,
        "unsupported_media_type",
        error.message || "Unsupported media type",
        { field: "headers.content-type" },
      );
    }
    if (error.status < 500)
      return new ServiceError(error.status, "invalid_request", error.message || "Invalid request");
  }
  return new ServiceError(500, "internal_error", "The service failed to handle this request", {
    cause: error,
  });
}

/** Renders a ServiceError as an RFC 9457 problem document. */
export function problemResponse(
  error: ServiceError,
  instance: string,
  extensions: Record<string, unknown> = {},
): Response {
  const body = {
    type: `urn:edge-inference:problem:${error.code}`,
    title: TITLES[error.code],
    status: error.status,
    detail: error.message,
    instance,
    code: error.code,
    ...(error.field === undefined ? {} : { field: error.field }),
    ...(error.errors === undefined ? {} : { errors: error.errors }),
    ...extensions,
  };
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { "content-type": "application/problem+json", ...error.headers },
  });
}
