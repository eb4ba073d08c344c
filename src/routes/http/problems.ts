// The error side of every route: which dialect a path's clients read (plain problem details, Open
// Inference Protocol, OpenAI), the members each adds, and the problem+json responses it documents.
import { z } from "@hono/zod-openapi";
import { ERROR_CODES, type ServiceError } from "../../errors/service-error";

export type ErrorDialect = "problem" | "oip" | "openai";

/** vLLM's routes outside /v1 (its ErrorResponse is OpenAI's shape). */
const OPENAI_ROOT_PATHS = new Set(["/tokenize", "/detokenize"]);

/** OIP clients (Triton's, KServe's) decode `error` from every `/v2` answer; OpenAI SDKs read
 *  `error.message` on every `/v1` route except the payment webhooks, which providers call.
 *
 * The renderer (render-errors.ts) and the OpenAPI document both follow it, so what is documented is
 * what is sent.
 */
export function errorDialect(path: string): ErrorDialect {
  if (path === "/v2" || path.startsWith("/v2/")) return "oip";
  if ((path === "/v1" || path.startsWith("/v1/")) && !path.startsWith("/v1/webhooks/"))
    return "openai";
  if (OPENAI_ROOT_PATHS.has(path)) return "openai";
  return "problem";
}

/** OpenAI's error `type` for a status (the SDK picks its exception class from the status). */
function openAIType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  return status >= 500 ? "server_error" : "invalid_request_error";
}

/** The members a dialect adds beside the RFC 9457 ones. */
export function dialectMembers(
  dialect: ErrorDialect,
  error: ServiceError,
): Record<string, unknown> {
  switch (dialect) {
    case "oip":
      return { error: error.message };
    case "openai":
      return {
        error: {
          message: error.message,
          type: openAIType(error.status),
          code: error.code,
          param: error.field ?? null,
        },
      };
    case "problem":
      return {};
    default: {
      const unknown: never = dialect;
      throw new Error(`unknown error dialect ${String(unknown)}`);
    }
  }
}

const problemFields = {
  type: z.string().openapi({
    description: "urn:edge-inference:problem:<code>",
    example: "urn:edge-inference:problem:invalid_request",
  }),
  title: z.string().openapi({ example: "Invalid request" }),
  status: z.number().int().openapi({ example: 400 }),
  detail: z
    .string()
    .openapi({ example: "model: Invalid input: expected string, received undefined" }),
  instance: z.string().openapi({ description: "The request path", example: "/v1/classify" }),
  code: z
    .enum(ERROR_CODES)
    .openapi({ description: "Stable machine-readable code (README: Errors)" }),
  field: z.string().optional().openapi({
    description: "The request field at fault, dot-separated (headers.<name> for a header)",
    example: "model",
  }),
  errors: z
    .array(z.object({ field: z.string(), detail: z.string() }))
    .optional()
    .openapi({ description: "Every failing field, when validation found several" }),
};

export const ProblemSchema = z.object(problemFields).openapi("Problem");

export const OipProblemSchema = z
  .object({
    ...problemFields,
    error: z
      .string()
      .openapi({ description: "The Open Inference Protocol's error member (= detail)" }),
  })
  .openapi("OipProblem");

export const OpenAIProblemSchema = z
  .object({
    ...problemFields,
    error: z
      .object({
        message: z.string(),
        type: z.enum([
          "invalid_request_error",
          "authentication_error",
          "permission_error",
          "rate_limit_error",
          "server_error",
        ]),
        code: z.enum(ERROR_CODES),
        param: z.string().nullable(),
      })
      .openapi({
        description:
          "OpenAI's error object, read by OpenAI SDKs " +
          "(message = detail, code = code, param = field)",
      }),
  })
  .openapi("OpenAIProblem");

const SCHEMAS = {
  problem: ProblemSchema,
  oip: OipProblemSchema,
  openai: OpenAIProblemSchema,
} as const;

/** Every status a route may answer with a problem, and what it means in general. */
const DESCRIPTIONS = {
  400:
    "Invalid request: a field missing, mistyped or out of range " +
    "(`invalid_request`), a body that is not JSON (`invalid_json`), or a " +
    "prompt longer than the model's context (`context_length_exceeded`)",
  401: "Missing, wrong or revoked credentials (`unauthorized`)",
  403: "The key lacks the scope this route needs (`insufficient_scope`, naming the scope)",
  404: "Unknown model, version or route (`model_not_found`, `not_found`)",
  413: "Body over MAX_BODY_BYTES, or a request over a size limit (`payload_too_large`)",
  415: "Body not sent as application/json (`unsupported_media_type`)",
  422: "Valid JSON the model or task cannot take (`unprocessable_input`)",
  429:
    "The key's request rate or token budget is spent, or the GPU origin is at capacity " +
    "(`rate_limited`); retry after Retry-After",
  500:
    "A store failed while recording (`internal_error`); the caller " +
    "retries (documented only where a route answers it on purpose)",
  502: "The GPU origin failed or answered something unexpected (`upstream_error`)",
  503:
    "A model not ready, a secret not configured, or the GPU origin unavailable " +
    "(`model_not_ready`, `not_configured`, `upstream_unavailable`); retry later",
  504: "The GPU origin did not answer in time (`upstream_timeout`)",
} as const;

export type ProblemStatus = keyof typeof DESCRIPTIONS;

/**
 * Statuses of every route behind a key: no valid key (401), a key without the route's scope
 * (403), a key over its request rate or token budget (429).
 */
export const KEY_ERRORS = [401, 403, 429] as const satisfies readonly ProblemStatus[];

/** Statuses every POST route with a JSON body can answer before its handler runs. */
export const BODY_ERRORS = [400, 413, 415] as const satisfies readonly ProblemStatus[];
/**
 * Statuses of a route that runs a model: unknown/unfit model, not ready, and the origin's failures.
 */
export const MODEL_ERRORS = [404, 422, 502, 503, 504] as const satisfies readonly ProblemStatus[];

/**
 * The documented problem responses of a route: the dialect its clients read (errorDialect of its
 * full path: each protocol's folder knows its own) and every status it can answer.
 */
export function problemResponses(
  dialect: ErrorDialect,
  ...statuses: ReadonlyArray<ProblemStatus | readonly ProblemStatus[]>
) {
  const schema = SCHEMAS[dialect];
  const all = [...new Set(statuses.flat())].sort((a, b) => a - b);
  return Object.fromEntries(
    all.map((status) => [
      status,
      { description: DESCRIPTIONS[status], content: { "application/problem+json": { schema } } },
    ]),
  );
}
