// A model served in two versions at once: ORIGIN_CANARY's split between the pool's `stable` and
// `canary` replicas (by their `version` labels), its rollback thresholds, and each request's
// sticky version from a hash of its key.
import { z } from "zod";
import type { Replica } from "./pool-config";

/** The canary's share and the thresholds past which this isolate rolls it back. */
export interface CanaryConfig {
  /** The version label of the replicas that serve by default. */
  readonly stable: string;
  /** The version label of the replicas on trial. */
  readonly canary: string;
  /** Percent (0–100) of sticky keys sent to the canary. */
  readonly weight: number;
  /** Rollback when the canary's share of failed attempts in the window is above this (0–1). */
  readonly maxErrorRate: number;
  /** Rollback when the canary's p95 time to first token in the window is above this. */
  readonly maxLatencyMs: number;
  /** What keeps a client on one version: its conversation's prefix (default), or its key. */
  readonly sticky: "conversation" | "key";
  /** The sliding window the rates are taken over. */
  readonly windowSeconds: number;
  /** Fewer canary attempts than this in the window decide nothing. */
  readonly minRequests: number;
}

const Label = z.string().trim().min(1).max(64);

const CanarySchema = z.strictObject({
  stable: Label,
  canary: Label,
  weight: z.number().min(0).max(100),
  maxErrorRate: z.number().min(0).max(1).default(0.05),
  maxLatencyMs: z.number().int().positive().max(600_000).default(10_000),
  sticky: z.enum(["conversation", "key"]).default("conversation"),
  windowSeconds: z.number().int().positive().max(3_600).default(60),
  minRequests: z.number().int().positive().max(100_000).default(20),
});

/** ORIGIN_CANARY's value against the model's pool: the split, or why it cannot be used. */
export function parseCanary(
  name: string,
  value: string,
  replicas: readonly Replica[],
): { canary: CanaryConfig } | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return { error: `${name} is not JSON (an object with "stable", "canary" and "weight")` };
  }
  const parsed = CanarySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issue.path.map((key) => `.${String(key)}`).join("");
    return { error: `${name}${at}: ${issue.message}` };
  }
  const canary = parsed.data;
  if (canary.stable === canary.canary)
    return { error: `${name}: "stable" and "canary" name the same version` };
  for (const field of ["stable", "canary"] as const)
    if (!replicas.some((replica) => replica.version === canary[field]))
      return {
        error: `${name}.${field}: no replica of the pool has version "${canary[field]}"`,
      };
  return { canary };
}

/** Prompt ids that make a conversation's sticky key when the request brings none. */
export const STICKY_PREFIX_TOKENS = 64;

/** FNV-1a over a string's UTF-16 units, or over ids: a 32-bit hash. */
function fnv(items: ArrayLike<number>): number {
  let hash = 0x811c9dc5;
  for (let at = 0; at < items.length; at += 1) {
    const item = items[at]!;
    hash = Math.imul(hash ^ (item & 0xffff), 0x01000193);
    hash = Math.imul(hash ^ (item >>> 16), 0x01000193);
  }
  hash ^= hash >>> 15;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash >>> 0;
}

const textHash = (text: string) => fnv(Array.from(text, (char) => char.codePointAt(0) ?? 0));

/** What a request says of who sent it and which conversation it continues. */
export interface StickyInput {
  keyId?: string | undefined;
  conversationKey?: string | undefined;
  promptIds: readonly number[];
}

/**
 * A request's sticky key as a hash: its API key id when the canary is sticky by key (and the
 * request has one); else its conversation (a chat's messages up to its first user turn), or,
 * without one, its prompt's first 64 ids (which a client resends with every turn).
 */
export function stickyHash(canary: CanaryConfig, request: StickyInput): number {
  if (canary.sticky === "key" && request.keyId !== undefined) return textHash(request.keyId);
  if (request.conversationKey !== undefined) return textHash(request.conversationKey);
  return fnv(request.promptIds.slice(0, STICKY_PREFIX_TOKENS));
}

/** The version a sticky key is sent to: the canary for `weight` percent of keys. */
export function splitVersion(hash: number, canary: CanaryConfig): string {
  return hash % 10_000 < canary.weight * 100 ? canary.canary : canary.stable;
}

/**
 * The pool's replica order for a request of `version`: its replicas first, in the fleet's
 * order, then the other version's as failover — or, once the canary is rolled back, the stable
 * replicas alone.
 */
export function versionOrder(
  order: readonly string[],
  pool: readonly Replica[],
  version: string,
  canary: CanaryConfig,
  rolledBack: boolean,
): string[] {
  const versionOf = new Map(pool.map((replica) => [replica.url, replica.version]));
  const first = rolledBack ? canary.stable : version;
  const own = order.filter((url) => versionOf.get(url) === first);
  const others = order.filter(
    (url) => versionOf.get(url) !== first && !(rolledBack && versionOf.get(url) === canary.canary),
  );
  return [...own, ...others];
}
