// The admin key routes' wire shapes: a key as operators see it (never its hash), and the
// request to create one.
import { z } from "@hono/zod-openapi";
import { type ApiKeyRecord, KeyLimitsSchema } from "../../tasks/keys/api-key";
import { SCOPES } from "../../tasks/keys/scopes";

export const LimitsSchema = KeyLimitsSchema.openapi("KeyLimits", {
  description:
    "Each absent limit is unlimited. Windows are fixed: the UTC minute, day and month. " +
    "Tokens are a generation's prompt plus completion tokens",
});

export const CreateKeyRequest = z
  .object({
    name: z.string().min(1).max(100).openapi({ example: "chat-frontend" }),
    scopes: z
      .array(z.enum(SCOPES))
      .min(1)
      .max(SCOPES.length)
      .openapi({ example: ["generate"] }),
    limits: LimitsSchema.optional(),
  })
  .strict()
  .openapi("CreateKeyRequest");

export const KeyView = z
  .object({
    id: z.string().openapi({ example: "key_3f9a0c1d2e4b5a69" }),
    name: z.string(),
    prefix: z.string().openapi({ description: "The key's first characters", example: "ei_Zx81Qa" }),
    scopes: z.array(z.enum(SCOPES)),
    limits: LimitsSchema,
    created_at: z.string(),
    rotated_at: z.string().nullable(),
    last_used_at: z.string().nullable().openapi({ description: "To the minute" }),
    revoked_at: z.string().nullable(),
  })
  .openapi("ApiKey");

export const IssuedKeyView = KeyView.extend({
  key: z.string().openapi({
    description: "The key itself: shown this once, never stored (only its SHA-256 is)",
  }),
}).openapi("IssuedApiKey");

export const KeyIdParams = z.object({
  id: z
    .string()
    .regex(/^key_[0-9a-f]{16}$/)
    .openapi({ example: "key_3f9a0c1d2e4b5a69" }),
});

export function keyView(record: ApiKeyRecord): z.infer<typeof KeyView> {
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    scopes: record.scopes,
    limits: record.limits,
    created_at: record.createdAt,
    rotated_at: record.rotatedAt,
    last_used_at: record.lastUsedAt,
    revoked_at: record.revokedAt,
  };
}
