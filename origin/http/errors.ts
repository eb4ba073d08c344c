// The origin's one error renderer: vLLM's ErrorResponse on /v1, RFC 9457 problem+json elsewhere.
import type { Context, Hono } from "hono";
import { problemResponse, toServiceError } from "../../src/errors/problem";
import { ServiceError } from "../../src/errors/service-error";

/** vLLM's err_type for each status (create_error_response's names). */
function vllmType(status: number): string {
  if (status === 401) return "AuthenticationError";
  if (status === 404) return "NotFoundError";
  if (status === 429) return "RateLimitError";
  if (status === 503) return "ServiceUnavailableError";
  if (status >= 500) return "InternalServerError";
  return "BadRequestError";
}

/** vLLM's ErrorResponse body for a ServiceError. */
export function vllmErrorBody(error: ServiceError): {
  error: { message: string; type: string; param: string | null; code: number };
} {
  return {
    error: {
      message: error.message,
      type: vllmType(error.status),
      param: error.field ?? null,
      code: error.status,
    },
  };
}

export function vllmErrorResponse(error: ServiceError): Response {
  return new Response(JSON.stringify(vllmErrorBody(error)), {
    status: error.status,
    headers: { "content-type": "application/json", ...error.headers },
  });
}

function render(error: unknown, c: Context): Response {
  const serviceError = toServiceError(error);
  if (serviceError.status >= 500)
    console.error(
      JSON.stringify({
        event: "request_failed",
        path: c.req.path,
        error: String(error),
        cause: String(serviceError.cause),
      }),
    );
  if (c.req.path.startsWith("/v1/")) return vllmErrorResponse(serviceError);
  return problemResponse(
    serviceError,
    c.req.path,
    c.req.path.startsWith("/v2") ? { error: serviceError.message } : {},
  );
}

export function renderErrors(app: Hono): void {
  app.notFound((c) =>
    render(new ServiceError(404, "not_found", `No route for ${c.req.method} ${c.req.path}`), c),
  );
  app.onError((error, c) => render(error, c));
}
