// Bearer-key auth for the origin's model routes (ORIGIN_API_KEY), compared in constant
// time over SHA-256 digests so neither the key's length nor a prefix leaks.
import { createHash, timingSafeEqual } from "node:crypto";
import { createMiddleware } from "hono/factory";
import { ServiceError } from "../../src/errors/service-error";

const digest = (value: string) => createHash("sha256").update(value).digest();
const challenge = { "www-authenticate": 'Bearer realm="origin"' };

/** Passes every request when `apiKey` is empty (the origin then listens on loopback only). */
export function requireKey(apiKey: string) {
  const expected = digest(apiKey);
  return createMiddleware(async (c, next) => {
    if (apiKey === "") return next();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "");
    if (match?.[1] === undefined || !timingSafeEqual(digest(match[1]), expected)) {
      throw new ServiceError(
        401,
        "unauthorized",
        "Send the origin's API key as `Authorization: Bearer <key>`",
        { field: "headers.authorization", headers: challenge },
      );
    }
    return next();
  });
}
