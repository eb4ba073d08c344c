// A model's origin as a pool of replicas, read from ORIGIN_URL (one URL, or several separated by
// commas) or ORIGIN_POOL (JSON: each replica's URL, weight and labels), checked with clear errors.
import { z } from "zod";
import { memoMap } from "../../memos";

/** One replica of a model's origin. */
export interface Replica {
  /** Base URL without a trailing slash, e.g. http://10.0.0.7:8000. */
  readonly url: string;
  /** Relative share of new conversations (default 1). */
  readonly weight: number;
  /** Where it runs, as the operator names it (e.g. "eu-west"). */
  readonly region?: string;
  /** What it serves, as the operator names it (e.g. "v2"). */
  readonly version?: string;
}

/** Replicas, or why the configuration cannot be used (the variable named). */
export type PoolConfig = { replicas: readonly Replica[] } | { error: string };

const HttpUrl = z
  .string()
  .trim()
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
    message: "must be an http(s) URL",
  });

const Label = z.string().trim().min(1).max(64);

const PoolSchema = z
  .array(
    z.strictObject({
      url: HttpUrl,
      weight: z.number().positive().max(1_000).optional(),
      region: Label.optional(),
      version: Label.optional(),
    }),
  )
  .min(1, { message: "must list at least one replica" })
  .max(64, { message: "at most 64 replicas" });

const trimmed = (url: string) => url.trim().replace(/\/+$/, "");

function duplicate(replicas: readonly Replica[]): string | undefined {
  const seen = new Set<string>();
  for (const { url } of replicas) {
    if (seen.has(url)) return url;
    seen.add(url);
  }
  return undefined;
}

function checked(name: string, replicas: Replica[]): PoolConfig {
  const twice = duplicate(replicas);
  if (twice !== undefined) return { error: `${name} lists ${twice} twice` };
  return { replicas };
}

/** ORIGIN_URL's value: one URL or a comma-separated list, every replica of weight 1. */
export function parseUrlList(name: string, value: string): PoolConfig {
  const urls = value.split(",").map((part) => part.trim());
  const replicas: Replica[] = [];
  for (const [index, url] of urls.entries()) {
    if (!HttpUrl.safeParse(url).success)
      return {
        error:
          urls.length === 1
            ? `${name} must be an http(s) URL, got "${url.slice(0, 100)}"`
            : `${name}: entry ${index} must be an http(s) URL, got "${url.slice(0, 100)}"`,
      };
    replicas.push({ url: trimmed(url), weight: 1 });
  }
  return checked(name, replicas);
}

/** ORIGIN_POOL's value: a JSON array of `{ url, weight?, region?, version? }`. */
export function parsePoolJson(name: string, value: string): PoolConfig {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return { error: `${name} is not JSON (a list of { "url", "weight", "region", "version" })` };
  }
  const parsed = PoolSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issue.path
      .map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`))
      .join("");
    return { error: `${name}${at}: ${issue.message}` };
  }
  return checked(
    name,
    parsed.data.map((replica) => ({
      ...replica,
      url: trimmed(replica.url),
      weight: replica.weight ?? 1,
    })),
  );
}

/** Parsed pools by variable name and value: configuration is read at each use. */
const parsedPools = memoMap<string, PoolConfig>("origin.pool-configs");
const PARSED_POOLS_MAX = 256;

function memo(key: string, parse: () => PoolConfig): PoolConfig {
  let parsed = parsedPools.get(key);
  if (parsed === undefined) {
    if (parsedPools.size >= PARSED_POOLS_MAX) parsedPools.clear();
    parsed = parse();
    parsedPools.set(key, parsed);
  }
  return parsed;
}

/**
 * A model's pool from its variables' values, each with the name it was read under: the pool
 * (ORIGIN_POOL) or the URL list (ORIGIN_URL), never both at one level; neither: no replicas.
 */
export function poolConfig(
  pool: { name: string; value: string } | undefined,
  urls: { name: string; value: string } | undefined,
): PoolConfig {
  if (pool !== undefined && urls !== undefined)
    return { error: `${pool.name} and ${urls.name} are both set; set one` };
  if (pool !== undefined)
    return memo(`${pool.name}\n${pool.value}`, () => parsePoolJson(pool.name, pool.value));
  if (urls !== undefined)
    return memo(`${urls.name}\n${urls.value}`, () => parseUrlList(urls.name, urls.value));
  return { replicas: [] };
}
