// How a request schema treats a parameter the service does not honour: accepted at its
// neutral value only, or refused unless absent — never silently ignored.
import { z } from "@hono/zod-openapi";

/**
 * A parameter accepted only at values that change nothing (e.g. `best_of: 1`, `logprobs: false`);
 * any other value is a 400 that says which value is supported.
 */
export const neutral = <T extends z.ZodType>(schema: T, what: string) =>
  z
    .union([schema, z.null()], { error: `only ${what} is supported by this service` })
    .optional()
    .openapi({
      description: `Accepted only at its neutral value (${what}); anything else is refused with 400`,
    });

export const refused = (name: string) =>
  z
    .unknown()
    .refine(
      (value) => value === undefined || value === null,
      `${name} is not supported by this service`,
    )
    .optional()
    .openapi({ description: "Not supported: refused with 400 unless absent or null" });
