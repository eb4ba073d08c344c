// The keys' table in D1 (migrations/0003_api_keys.sql): read by hash when a key is presented,
// written by the admin routes. D1 rather than KV: a revocation must be read back at once
// (KV is eventually consistent, up to 60 s), and operators list and query keys.
import { ServiceError } from "../../errors/service-error";
import { type ApiKeyRecord, KeyLimitsSchema } from "./api-key";
import { ScopeSchema } from "./scopes";

interface Row {
  id: string;
  name: string;
  key_prefix: string;
  scopes: string;
  limits: string;
  created_at: string;
  rotated_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

const COLUMNS =
  "id, name, key_prefix, scopes, limits, created_at, rotated_at, last_used_at, revoked_at";

function toRecord(row: Row): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.key_prefix,
    scopes: ScopeSchema.array().parse(JSON.parse(row.scopes)),
    limits: KeyLimitsSchema.parse(JSON.parse(row.limits)),
    createdAt: row.created_at,
    rotatedAt: row.rotated_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

/** A database without the keys' table is an operator's error: 503 naming the migration. */
export async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof Error && /no such table: (api_keys|audit_log)/.test(error.message)) {
      throw new ServiceError(
        503,
        "not_configured",
        "The D1 database lacks migration 0003_api_keys.sql",
        { cause: error },
      );
    }
    throw error;
  }
}

export interface NewKey {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  scopes: readonly string[];
  limits: object;
  createdAt: string;
}

export function keyStore(db: D1Database) {
  const one = async (sql: string, ...values: unknown[]) => {
    const row = await guarded(() =>
      db
        .prepare(sql)
        .bind(...values)
        .first<Row>(),
    );
    return row === null ? undefined : toRecord(row);
  };
  return {
    byHash: (hash: string) => one(`SELECT ${COLUMNS} FROM api_keys WHERE key_hash = ?`, hash),
    byId: (id: string) => one(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`, id),
    async list(): Promise<ApiKeyRecord[]> {
      const { results } = await guarded(() =>
        db.prepare(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, id`).all<Row>(),
      );
      return results.map(toRecord);
    },
    async insert(key: NewKey): Promise<ApiKeyRecord> {
      await guarded(() =>
        db
          .prepare(
            "INSERT INTO api_keys (id, name, key_hash, key_prefix, scopes, limits, created_at) " +
              "VALUES (?, ?, ?, ?, ?, ?, ?)",
          )
          .bind(
            key.id,
            key.name,
            key.hash,
            key.prefix,
            JSON.stringify(key.scopes),
            JSON.stringify(key.limits),
            key.createdAt,
          )
          .run(),
      );
      const stored = await this.byId(key.id);
      if (stored === undefined) throw new Error(`key ${key.id} was not stored`);
      return stored;
    },
    /** A new secret for a live key; the old one stops matching. Undefined: none live by that id. */
    rotate: (id: string, hash: string, prefix: string, at: string) =>
      one(
        "UPDATE api_keys SET key_hash = ?, key_prefix = ?, rotated_at = ? " +
          `WHERE id = ? AND revoked_at IS NULL RETURNING ${COLUMNS}`,
        hash,
        prefix,
        at,
        id,
      ),
    /** Revokes a key (once: a second revocation keeps the first time). */
    revoke: (id: string, at: string) =>
      one(
        "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) " +
          `WHERE id = ? RETURNING ${COLUMNS}`,
        at,
        id,
      ),
    async touch(id: string, at: string): Promise<void> {
      await guarded(() =>
        db.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?").bind(at, id).run(),
      );
    },
  };
}

export type KeyStore = ReturnType<typeof keyStore>;
