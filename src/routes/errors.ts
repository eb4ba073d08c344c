// The single error renderer: every failure leaves as RFC 9457 application/problem+json,
// unknown routes included. Shared by the Worker and the reference origin (origin/).
import type { Hono } from "hono";
import { problemResponse, toServiceError } from "../errors/problem";
import { ServiceError } from "../errors/service-error";
import type { AppEnv } from "./services";

/** Open Inference Protocol clients read `error` (tritonclient fails without it); everyone else reads the RFC 9457 members. */
function oipExtensions(path: string, error: ServiceError): Record<string, string> {
  return path === "/v2" || path.startsWith("/v2/") ? { error: error.message } : {};
}

export function renderErrors(app: Hono<AppEnv>): void {
  app.notFound((c) => {
    const error = new ServiceError(404, "not_found", `No route for ${c.req.method} ${c.req.path}`);
    return problemResponse(error, c.req.path, oipExtensions(c.req.path, error));
  });

  app.onError((error, c) => {
    const serviceError = toServiceError(error);
    if (serviceError.status >= 500) {
      const cause = serviceError.cause === undefined ? {} : { cause: String(serviceError.cause) };
      console.error(JSON.stringify({ event: "request_failed", path: c.req.path, requestId: c.get("requestId"), error: String(error), ...cause }));
    }
    const response = problemResponse(serviceError, c.req.path, oipExtensions(c.req.path, serviceError));
    response.headers.set("x-request-id", c.get("requestId"));
    return response;
  });
}
