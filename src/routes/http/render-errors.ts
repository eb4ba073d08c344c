// The single error renderer, shared by the Worker and the reference origin: every failure leaves
// as application/problem+json, unknown routes included, with the members its path's clients read.
import type { Context, Hono } from "hono";
import { problemResponse, toServiceError } from "../../errors/problem";
import { ServiceError } from "../../errors/service-error";
import { dialectMembers, errorDialect } from "./problems";
import type { AppEnv } from "./services";

function render(error: ServiceError, c: Context<AppEnv>): Response {
  const response = problemResponse(
    error,
    c.req.path,
    dialectMembers(errorDialect(c.req.path), error),
  );
  const requestId = c.get("requestId");
  if (requestId !== undefined) response.headers.set("x-request-id", requestId);
  return response;
}

export function renderErrors(app: Hono<AppEnv>): void {
  app.notFound((c) =>
    render(new ServiceError(404, "not_found", `No route for ${c.req.method} ${c.req.path}`), c),
  );

  app.onError((error, c) => {
    const serviceError = toServiceError(error);
    if (serviceError.status >= 500) {
      const cause = serviceError.cause === undefined ? {} : { cause: String(serviceError.cause) };
      console.error(
        JSON.stringify({
          event: "request_failed",
          path: c.req.path,
          requestId: c.get("requestId"),
          error: String(error),
          ...cause,
        }),
      );
    }
    return render(serviceError, c);
  });
}
