// Which replica of a pool serves a request, as pure code: prefix affinity from the prompt's
// token ids (chained block hashes, a longest-prefix index, weighted rendezvous hashing), a spill
// by the prefill each replica has queued, bounded load over in-flight counts and the replicas'
// own reports, and health; it fails open when nothing is known to be healthy.

/** Tokens per block: vLLM's default block size, and the reference origin's. */
export const BLOCK_TOKENS = 16;
/** A replica takes new work while its in-flight count is under this × its fair share… */
export const LOAD_FACTOR = 1.25;
/** …or under the least loaded's count plus this: one request more never spills a prefix. */
export const LOAD_SLACK = 2;

/** How requests are spread: by prefix (default), in turn, or to the least loaded. */
export type RoutingPolicy = "affinity" | "round-robin" | "least-loaded";

/** What the choice knows of one replica. */
export interface ReplicaView {
  readonly url: string;
  readonly weight: number;
  /** Requests this isolate has in flight there. */
  readonly inFlight: number;
  /** Requests running and waiting there: this isolate's and others' as it reported them lately. */
  readonly reported?: number;
  /** False while draining, ejected (circuit open) or waiting for its probe. */
  readonly healthy: boolean;
  /** True while it recently said it is full (429): tried after the others, never excluded. */
  readonly busy?: boolean;
  /**
   * Requests waiting there for their first token (queued or prefilling): this isolate's and
   * others' as it reported them lately. Unknown: the in-flight bound applies as if some wait.
   */
  readonly waiting?: number;
  /** Prompt tokens those waiting requests leave to compute (prefill ahead of a new request). */
  readonly queuedTokens?: number;
}

/**
 * The prompt's whole blocks as chained 32-bit hashes (FNV-1a over the ids, each block seeded by
 * the previous block's hash): equal hashes at position i mean equal prefixes of (i + 1) blocks.
 */
export function blockHashes(ids: readonly number[], blockTokens = BLOCK_TOKENS): number[] {
  const blocks = Math.floor(ids.length / blockTokens);
  const hashes = new Array<number>(blocks);
  let hash = 0x811c9dc5;
  for (let block = 0; block < blocks; block += 1) {
    for (let at = block * blockTokens, end = at + blockTokens; at < end; at += 1) {
      const id = ids[at]!;
      hash = Math.imul(hash ^ (id & 0xff), 0x01000193);
      hash = Math.imul(hash ^ ((id >>> 8) & 0xff), 0x01000193);
      hash = Math.imul(hash ^ (id >>> 16), 0x01000193);
    }
    hashes[block] = hash >>> 0;
  }
  return hashes;
}

/** A 32-bit mix of a key and a replica's URL (for rendezvous hashing). */
function mix(key: number, url: string): number {
  let hash = key ^ 0x9e3779b9;
  for (let at = 0; at < url.length; at += 1)
    hash = Math.imul(hash ^ url.charCodeAt(at), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash >>> 0;
}

/** Weighted rendezvous score (highest random weight): -weight / ln(u), u in (0, 1). */
function rendezvous(key: number, replica: ReplicaView): number {
  const unit = (mix(key, replica.url) + 1) / 4_294_967_297;
  return -replica.weight / Math.log(unit);
}

/** A replica's load: its fresh report of its queue, or this isolate's count if that is more. */
const loadOf = (replica: ReplicaView) => Math.max(replica.inFlight, replica.reported ?? 0);

/** Load relative to weight: the least loaded first. */
const relativeLoad = (replica: ReplicaView) => loadOf(replica) / replica.weight;

export interface Choice {
  /** Replicas in the order to try them: the first serves, the next take over on failure. */
  order: ReplicaView[];
  /** Why the first was chosen (for logs and tests). */
  reason: "affinity" | "hash" | "load" | "turn" | "spill" | "fail-open";
  /** Whole-block prompt tokens each replica has not served before, by URL (affinity only). */
  uncached?: Map<string, number>;
}

export interface ChoiceInput {
  replicas: readonly ReplicaView[];
  policy: RoutingPolicy;
  /** The prompt's block hashes (empty: nothing to be affine to). */
  hashes: readonly number[];
  /** The replicas this isolate sent a prefix ending at this block hash (none: unknown). */
  servedBy(hash: number): readonly string[];
  /** A counter for round-robin. */
  turn: number;
}

/**
 * Moves replicas at or over their bound behind the others: LOAD_FACTOR × their fair share of
 * the load, but never under the least loaded's count plus LOAD_SLACK (at a light load the
 * fair share rounds to one, and a turn would leave its cached history for an idle replica).
 * With `waitingOnly`, a replica over it where nothing waits for a first token keeps its place:
 * running requests share its decode steps and delay a new one little.
 */
function boundLoad(
  order: ReplicaView[],
  waitingOnly = false,
): { order: ReplicaView[]; spilled: boolean } {
  const total = order.reduce((sum, replica) => sum + loadOf(replica), 0);
  const weights = order.reduce((sum, replica) => sum + replica.weight, 0);
  const least = Math.min(...order.map(loadOf));
  const under: ReplicaView[] = [];
  const over: ReplicaView[] = [];
  for (const replica of order) {
    const share = Math.ceil((LOAD_FACTOR * (total + 1) * replica.weight) / weights);
    const capacity = Math.max(share, least + LOAD_SLACK);
    const fits = loadOf(replica) < capacity || (waitingOnly && replica.waiting === 0);
    (fits && replica.busy !== true ? under : over).push(replica);
  }
  over.sort((a, b) => Number(a.busy === true) - Number(b.busy === true));
  return { order: [...under, ...over], spilled: under[0] !== order[0] };
}

/**
 * The tokens a replica computes before this request's first token: the prefill queued there
 * plus the prompt's blocks it has not served. (Not by weight: new prefixes tie, and go by the
 * weighted rendezvous order.)
 */
const prefillCost = (replica: ReplicaView, uncached: number) =>
  (replica.queuedTokens ?? 0) + uncached;

/** The order in which to try a pool's replicas for one request. */
export function chooseReplicas({ replicas, policy, hashes, servedBy, turn }: ChoiceInput): Choice {
  const healthy = replicas.filter((replica) => replica.healthy);
  // Nothing known to be healthy: try them all rather than refuse (each call still meets its
  // circuit breaker).
  const failOpen = healthy.length === 0;
  const pool = failOpen ? [...replicas] : healthy;
  if (policy === "round-robin") {
    const start = turn % pool.length;
    const order = [...pool.slice(start), ...pool.slice(0, start)];
    return { order, reason: failOpen ? "fail-open" : "turn" };
  }
  if (policy === "least-loaded" || hashes.length === 0) {
    const order = pool.sort((a, b) => relativeLoad(a) - relativeLoad(b));
    const busyLast = boundLoad(order).order;
    return { order: busyLast, reason: failOpen ? "fail-open" : "load" };
  }
  const key = hashes[hashes.length - 1]!;
  const byHash = pool
    .map((replica) => ({ replica, score: rendezvous(key, replica) }))
    .sort((a, b) => b.score - a.score)
    .map(({ replica }) => replica);
  let reason: Choice["reason"] = "hash";
  // How many of the prompt's blocks each replica served (the longest prefix it was sent).
  const cachedBlocks = new Map<string, number>();
  const urls = new Set(pool.map(({ url }) => url));
  for (let at = hashes.length - 1; at >= 0 && cachedBlocks.size < pool.length; at -= 1)
    for (const url of servedBy(hashes[at]!))
      if (urls.has(url) && !cachedBlocks.has(url)) cachedBlocks.set(url, at + 1);
  // The longest prefix this isolate has sent somewhere goes back there. One sent to several (a
  // shared system prompt) counts as held by every replica: a replica without it computes it
  // once and holds it for every later conversation, so the request goes to the least loaded of
  // all (ties: the prompt's rendezvous order) and new conversations spread even when none waits.
  const deepest = Math.max(0, ...cachedBlocks.values());
  const holders = byHash.filter((replica) => cachedBlocks.get(replica.url) === deepest);
  const shared = holders.length >= 2;
  if (deepest > 0 && holders.length > 0) {
    const least = (shared ? byHash : holders).reduce((a, b) =>
      relativeLoad(b) < relativeLoad(a) ? b : a,
    );
    byHash.unshift(...byHash.splice(byHash.indexOf(least), 1));
    reason = "affinity";
  }
  // It leaves that replica only for one where its first token comes sooner by prefill: the
  // tokens queued there plus those of its own prompt not cached there (stable: ties stay).
  const uncached = new Map(
    byHash.map(({ url }) => [url, (hashes.length - (cachedBlocks.get(url) ?? 0)) * BLOCK_TOKENS]),
  );
  const ownUncached = (hashes.length - deepest) * BLOCK_TOKENS;
  const cost = new Map(
    byHash.map((replica) => [
      replica,
      prefillCost(replica, shared ? ownUncached : uncached.get(replica.url)!),
    ]),
  );
  const byCost = [...byHash].sort((a, b) => cost.get(a)! - cost.get(b)!);
  const bounded = boundLoad(byCost, true);
  const spilled = bounded.order[0] !== byHash[0];
  return {
    order: bounded.order,
    reason: failOpen ? "fail-open" : spilled ? "spill" : reason,
    uncached,
  };
}
