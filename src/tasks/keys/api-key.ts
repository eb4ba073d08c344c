// What a stored key is (id, name, scopes, limits, times) and how a key's secret is made and
// hashed: 256 random bits, so a plain SHA-256 is a safe lookup hash (no password stretching).
import { z } from "zod";
import { toHex } from "../../protocols/hex";
import type { Scope } from "./scopes";

/** Per-key limits; each one absent is unlimited. Windows are fixed: the UTC minute, day, month. */
export const KeyLimitsSchema = z
  .object({
    requests_per_minute: z.number().int().positive().max(1_000_000).optional(),
    tokens_per_minute: z.number().int().positive().max(1_000_000_000).optional(),
    tokens_per_day: z.number().int().positive().max(1_000_000_000_000).optional(),
    tokens_per_month: z.number().int().positive().max(1_000_000_000_000).optional(),
  })
  .strict();

export type KeyLimits = z.infer<typeof KeyLimitsSchema>;

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** The key's first characters (`ei_` and 6 more): enough to recognise it, not to use it. */
  prefix: string;
  scopes: Scope[];
  limits: KeyLimits;
  createdAt: string;
  rotatedAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** A new key's secret: `ei_` and 43 base64url characters (256 random bits). */
export function newSecret(): string {
  return `ei_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
}

export function newKeyId(): string {
  return `key_${toHex(crypto.getRandomValues(new Uint8Array(8)))}`;
}

export const secretPrefix = (secret: string): string => secret.slice(0, 9);

export function sha256(value: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", encoder.encode(value));
}

/** The stored form of a key: its SHA-256 in hex. */
export const digestHex = (digest: ArrayBuffer): string => toHex(digest);
