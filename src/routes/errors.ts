// The single error renderer: every failure leaves as RFC 9457 application/problem+json,
// unknown routes included. Shared by the Worker and the reference origin (origin/).
import type { Hono } from "hono";
import { problemResponse, toServiceError } from "../errors/problem";
import { ServiceError } from "../errors/service-error";
import type { AppEnv } from "./services";

export function renderErrors(app: Hono<AppEnv>): void {
  app.notFound((c) => problemResponse(new ServiceError(404, "not_found", `No route for ${c.req.method} ${c.req.path}`), c.req.path));

  app.onError((error, c) => {
    const serviceError = toServiceError(error);
    if (serviceError.status >= 500) {
      const cause = serviceError.cause === undefined ? {} : { cause: String(serviceError.cause) };
      console.error(JSON.stringify({ event: "request_failed", path: c.req.path, requestId: c.get("requestId"), error: String(error), ...cause }));
    }
    // Open Inference Protocol clients read `error`; everyone else reads the RFC 9457 members.
    const extensions = c.req.path.startsWith("/v2") ? { error: serviceError.message } : {};
    const response = problemResponse(serviceError, c.req.path, extensions);
    response.headers.set("x-request-id", c.get("requestId"));
    return response;
  });
}
