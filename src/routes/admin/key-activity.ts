// GET /admin/keys/{id}/activity and /usage: what a key did (the audit trail's latest rows) and
// how much per day, for operators (scope `admin`, mounted under /admin/keys).
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { AUDIT_RETENTION_DAYS, dailyUsage, recentActivity } from "../../tasks/keys/audit";
import { keyLimiter } from "../../tasks/keys/key-limiter";
import { keyStore } from "../../tasks/keys/key-store";
import { KEY_ERRORS, problemResponses } from "../http/problems";
import type { AppEnv } from "../http/services";
import { validationHook } from "../http/validation";

const AuditedKeyParams = z.object({
  id: z
    .string()
    .regex(/^(key_[0-9a-f]{16}|bootstrap-\d{1,3}|anonymous)$/)
    .openapi({
      description: "A stored key's id, `bootstrap-<n>` (the n-th API_KEYS key) or `anonymous`",
      example: "key_3f9a0c1d2e4b5a69",
    }),
});

const ActivityRow = z
  .object({
    at: z.string().openapi({ description: "When the request arrived (ISO 8601, UTC)" }),
    method: z.string(),
    route: z.string().openapi({
      description: "The route's template (path values such as a card id are not kept)",
      example: "/v1/chat/completions",
    }),
    model: z.string().nullable(),
    status: z.number().int(),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    latency_ms: z.number().int().openapi({ description: "Until the answer's headers" }),
  })
  .openapi("KeyActivity");

const UsageDay = z
  .object({
    day: z.string().openapi({ example: "2026-11-27" }),
    requests: z.number().int(),
    errors: z.number().int().openapi({ description: "Requests answered 4xx or 5xx" }),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
  })
  .openapi("KeyUsageDay");

const activityRoute = createRoute({
  method: "get",
  path: "/{id}/activity",
  operationId: "apiKeyActivity",
  summary: "A key's latest requests from the audit trail, newest first",
  request: {
    params: AuditedKeyParams,
    query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) }),
  },
  responses: {
    200: {
      description: `Up to \`limit\` rows (kept ${AUDIT_RETENTION_DAYS} days)`,
      content: { "application/json": { schema: z.object({ data: z.array(ActivityRow) }) } },
    },
    ...problemResponses("problem", 400, KEY_ERRORS, 503),
  },
});

const usageRoute = createRoute({
  method: "get",
  path: "/{id}/usage",
  operationId: "apiKeyUsage",
  summary: "A key's requests and tokens per UTC day, and its limits' current counts",
  request: {
    params: AuditedKeyParams,
    query: z.object({
      days: z.coerce.number().int().min(1).max(AUDIT_RETENTION_DAYS).default(7),
    }),
  },
  responses: {
    200: {
      description: "Per day, newest first; `used`: tokens charged in the current windows",
      content: {
        "application/json": {
          schema: z
            .object({
              data: z.array(UsageDay),
              used: z
                .object({ minute: z.number(), day: z.number(), month: z.number() })
                .nullable()
                .openapi({ description: "Null for a key without token limits" }),
            })
            .openapi("KeyUsage"),
        },
      },
    },
    ...problemResponses("problem", 400, KEY_ERRORS, 503),
  },
});

export const keyActivityRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

keyActivityRoutes.openapi(activityRoute, async (c) => {
  const { id } = c.req.valid("param");
  const { limit } = c.req.valid("query");
  return c.json({ data: await recentActivity(c.env.DB, id, limit) }, 200);
});

keyActivityRoutes.openapi(usageRoute, async (c) => {
  const { id } = c.req.valid("param");
  const { days } = c.req.valid("query");
  const [data, record] = await Promise.all([
    dailyUsage(c.env.DB, id, days),
    id.startsWith("key_") ? keyStore(c.env.DB).byId(id) : undefined,
  ]);
  const limits = record?.limits ?? {};
  const budgeted = Object.keys(limits).some((name) => name.startsWith("tokens_"));
  const used = budgeted ? await keyLimiter(c.env.KEY_LIMITS, id).used() : null;
  return c.json({ data, used }, 200);
});
