// The error responses a generation route documents (every status it can return).
import { z } from "@hono/zod-openapi";

const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    field: z.string().optional(),
    error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string() }).openapi({ description: "OpenAI's error member, beside RFC 9457's" }),
  })
  .openapi("GenerationProblem");

const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: Problem } } });

export const generationErrors = {
  400: problem("Invalid request, a refused parameter (named in `field`), or `context_length_exceeded`"),
  401: problem("Missing or wrong API key"),
  404: problem("Unknown model"),
  413: problem("Request body too large"),
  415: problem("Body is not JSON"),
  422: problem("The model does not generate text"),
  429: problem("The GPU origin is at capacity (Retry-After)"),
  502: problem("The GPU origin failed before the first token"),
  503: problem("Model not ready, origin not configured, or the origin unavailable (Retry-After)"),
  504: problem("The GPU origin did not answer or send a first token in time"),
} as const;
