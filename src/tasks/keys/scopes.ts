// The rights a key can hold, one per kind of route: each route requires exactly one of them.
import { z } from "zod";

/**
 * generate: chat, completions, responses, images and Workers AI generation; classify:
 * classification, OIP inference, tokenize; fraud:score; fraud:read: card histories and
 * decisions; metrics: /metrics; admin: managing keys and reading their activity.
 */
export const SCOPES = [
  "generate",
  "classify",
  "fraud:score",
  "fraud:read",
  "metrics",
  "admin",
] as const;

export type Scope = (typeof SCOPES)[number];

export const ScopeSchema = z.enum(SCOPES);
