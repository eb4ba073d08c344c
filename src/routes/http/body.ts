// Request-body guards that run before parsing: JSON only (415) and a size ceiling (413),
// enforced on the stream so an oversized or lying Content-Length cannot get through; and the body
// read as text without keeping the request alive.
import { memoMap } from "../../memos";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { MiddlewareHandler } from "hono";
import { ServiceError } from "../../errors/service-error";

export const requireJson = createMiddleware(async (c, next) => {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
    throw new ServiceError(
      415,
      "unsupported_media_type",
      "Send the request body as application/json",
      {
        field: "headers.content-type",
        headers: { accept: "application/json" },
      },
    );
  }
  return next();
});

/** A body of one of the given media types (JSON by its +json suffix too), or a 415 listing them. */
export function requireMediaType(types: readonly string[]) {
  return createMiddleware(async (c, next) => {
    const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    const json = /^application\/(?:[\w.+-]+\+)?json$/.test(type);
    if (!(json && types.includes("application/json")) && !types.includes(type)) {
      throw new ServiceError(
        415,
        "unsupported_media_type",
        `Send the request body as one of: ${types.join(", ")}`,
        {
          field: "headers.content-type",
          headers: { accept: types.join(", ") },
        },
      );
    }
    return next();
  });
}

/** One bodyLimit middleware per configured MAX_BODY_BYTES, built on first use (not per request). */
const limits = memoMap<string, MiddlewareHandler>("http.body-limits");

function limitFor(config: string): MiddlewareHandler {
  let limit = limits.get(config);
  if (limit === undefined) {
    const maxSize = Number(config);
    limit = bodyLimit({
      maxSize,
      onError: () => {
        throw new ServiceError(
          413,
          "payload_too_large",
          `The request body is over the limit of ${maxSize} bytes`,
        );
      },
    });
    limits.set(config, limit);
  }
  return limit;
}

export const limitBody = createMiddleware<{ Bindings: Env }>(async (c, next) =>
  limitFor(c.env.MAX_BODY_BYTES)(c, next),
);

/**
 * The body as text, read through a Response that holds nothing but the body's stream. workerd
 * keeps the object whose `text()` is pending alive until the isolate's next full collection
 * (measured: its wrapper is never dropped by a young collection). Read off the Request itself,
 * that is the whole incoming request (headers, URL, signal), torn down inside the one pause that
 * stops every request in flight; this way the Request goes with the young collections, and only
 * the small Response waits (docs/fraud.md "What the tail is made of").
 */
export const bodyText = (request: Request): Promise<string> => new Response(request.body).text();
