// Reading a JSON request body: JSON only (415), a size ceiling (413), malformed JSON a
// 400 — all as ServiceErrors naming the field, before any schema runs.
import type { Context } from "hono";
import type { z } from "zod";
import { ServiceError } from "../../src/errors/service-error";

export async function readJsonBody(c: Context, maxBytes: number): Promise<unknown> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
    throw new ServiceError(
      415,
      "unsupported_media_type",
      "Send the request body as application/json",
      { field: "headers.content-type" },
    );
  }
  const declared = Number(c.req.header("content-length") ?? 0);
  if (declared > maxBytes)
    throw new ServiceError(
      413,
      "payload_too_large",
      `The request body is over the limit of ${maxBytes} bytes`,
    );
  const text = await c.req.text();
  if (Buffer.byteLength(text) > maxBytes)
    throw new ServiceError(
      413,
      "payload_too_large",
      `The request body is over the limit of ${maxBytes} bytes`,
    );
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ServiceError(400, "invalid_json", "The request body is not valid JSON", {
      field: "body",
      cause: error,
    });
  }
}

/** Parses with a zod schema; the first failing field names the 400. */
export function parseWith<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = result.error.issues.map((issue) => ({
    field: issue.path.map(String).join(".") || "body",
    detail: issue.message,
  }));
  const first = errors[0]!;
  throw new ServiceError(400, "invalid_request", `${first.field}: ${first.detail}`, {
    field: first.field,
    errors,
  });
}
