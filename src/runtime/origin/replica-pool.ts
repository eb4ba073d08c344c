// What this isolate knows of each origin replica — in-flight requests (and which still wait for
// a first token, with the prefill they queued), draining, recent "full" answers, its circuit
// breaker, which prefixes it served — and the active probe that brings a
// drained replica back; the choice itself is replica-choice.ts.
import type { EndpointLoad } from "../../protocols/endpoint-load-metrics";
import type { Breakers, CircuitBreaker } from "./circuit-breaker";
import type { Replica } from "./pool-config";
import {
  BLOCK_TOKENS,
  blockHashes,
  chooseReplicas,
  type ReplicaView,
  type RoutingPolicy,
} from "./replica-choice";

/** Block hashes remembered with the replicas that served them (oldest forgotten first). */
const AFFINITY_ENTRIES = 65_536;
/** A draining replica's longest rest before it is probed again, whatever its Retry-After. */
const MAX_DRAIN_MS = 60_000;
/** A replica that answered 429 is tried after the others for this long. */
const BUSY_MS = 1_000;
const PROBE_TIMEOUT_MS = 2_000;
/**
 * How long a replica's own report of its queue counts. A gauge that is stale or stuck high
 * (vllm-project/vllm#29928) then stops counting, so a replica that says it is full still gets
 * requests as this isolate's counts allow, and its next answer reports afresh.
 */
const REPORT_FRESH_MS = 2_000;

interface ReplicaState {
  readonly breaker: CircuitBreaker;
  inFlight: number;
  /** This isolate's requests there still waiting for their first token… */
  waiting: number;
  /** …and the prompt tokens they left to compute there, those overtaken by a later one aside. */
  queuedTokens: number;
  /** Those not overtaken, in the order they were sent there (each drops its tokens once). */
  queue: Set<() => void>;
  /** Until when it gets no new requests (draining or a failed probe); then it is probed. */
  restUntil: number;
  /** Set while resting: a probe must answer before it takes requests again. */
  needsProbe: boolean;
  probing: boolean;
  busyUntil: number;
  /**
   * Requests of others (other isolates, other clients) running and waiting there, as its last
   * report said (its count less this isolate's in flight then), and when.
   */
  others: number;
  /** Of those, the ones waiting (not yet running), when the report said. */
  othersWaiting: number;
  reportedAt: number;
}

/** One request's replica while it is there: `release` once it ends, whatever the outcome. */
export interface Lease {
  readonly url: string;
  readonly breaker: CircuitBreaker;
  /** Its first token came: neither it nor those sent there before it wait for prefill there. */
  started(): void;
  release(): void;
}

export interface Fleet {
  /**
   * The replicas of `pool` in the order to try them for a prompt (`promptIds` undefined: no
   * affinity, least loaded first). `probePath`: what answers 200 when the replica is ready.
   */
  choose(
    pool: readonly Replica[],
    promptIds: readonly number[] | undefined,
    probePath: string,
  ): string[];
  /**
   * Counts a request in flight at `url` until the lease is released, and waiting until it
   * starts (with the tokens of `promptIds` that replica had not served when it was chosen).
   */
  lease(url: string, promptIds?: readonly number[]): Lease;
  /** Remembers that `url` now holds the prompt's prefix in its cache. */
  served(url: string, promptIds: readonly number[]): void;
  /** The replica refused new work (503 with Retry-After, or not ready): no new requests. */
  draining(url: string, retryAfterSeconds: number): void;
  /** The replica answered 429: tried after the others for a moment. */
  busy(url: string): void;
  /**
   * The replica reported its queue (this isolate's requests included) on the answer to a
   * request still leased.
   */
  reported(url: string, load: EndpointLoad): void;
  /** In-flight counts by URL (for tests and metrics). */
  inFlight(): Record<string, number>;
  /** How many choices were made for each reason (affinity, hash, spill, …). */
  reasons(): Record<string, number>;
}

export interface FleetOptions {
  breakers: Breakers;
  policy?: RoutingPolicy;
  now?: () => number;
  /** Sends a probe; default: fetch. */
  probe?: (url: string) => Promise<boolean>;
}

async function fetchProbe(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** This isolate's view of every replica it calls (the services hold the Worker's). */
export function createFleet(options: FleetOptions): Fleet {
  const { breakers, policy = "affinity", now = Date.now, probe = fetchProbe } = options;
  const states = new Map<string, ReplicaState>();
  const affinity = new Map<number, string[]>();
  /** The tokens each replica had not served of a prompt, from its last choice. */
  const uncachedOf = new WeakMap<readonly number[], Map<string, number>>();
  /** Tokens a request of this isolate left to compute, on average (stands for others' too). */
  let meanUncached = BLOCK_TOKENS;
  let turn = 0;
  const reasons: Record<string, number> = {};
  const state = (url: string): ReplicaState => {
    let found = states.get(url);
    if (found === undefined) {
      found = {
        breaker: breakers(url),
        inFlight: 0,
        waiting: 0,
        queuedTokens: 0,
        queue: new Set(),
        restUntil: 0,
        needsProbe: false,
        probing: false,
        busyUntil: 0,
        others: 0,
        othersWaiting: 0,
        reportedAt: Number.NEGATIVE_INFINITY,
      };
      states.set(url, found);
    }
    return found;
  };
  /** Past its rest, a drained replica is probed (once at a time) before it takes requests. */
  const healthy = (url: string, replica: ReplicaState, probePath: string, at: number) => {
    if (!replica.breaker.available()) return false;
    if (!replica.needsProbe) return true;
    if (at < replica.restUntil || replica.probing) return false;
    replica.probing = true;
    void probe(`${url}${probePath}`).then((ready) => {
      replica.probing = false;
      if (ready) replica.needsProbe = false;
      else replica.restUntil = now() + 5_000;
    });
    return false;
  };
  return {
    choose(pool, promptIds, probePath) {
      if (pool.length === 1) return [pool[0]!.url];
      const at = now();
      const views: ReplicaView[] = pool.map(({ url, weight }) => {
        const replica = state(url);
        const fresh = at - replica.reportedAt <= REPORT_FRESH_MS;
        const othersWaiting = fresh ? replica.othersWaiting : 0;
        return {
          url,
          weight,
          inFlight: replica.inFlight,
          ...(fresh ? { reported: replica.inFlight + replica.others } : {}),
          waiting: replica.waiting + othersWaiting,
          queuedTokens: replica.queuedTokens + othersWaiting * meanUncached,
          healthy: healthy(url, replica, probePath, at),
          busy: at < replica.busyUntil,
        };
      });
      turn = (turn + 1) % 1_000_000_007;
      const choice = chooseReplicas({
        replicas: views,
        policy,
        hashes: promptIds === undefined ? [] : blockHashes(promptIds),
        servedBy: (hash) => affinity.get(hash) ?? [],
        turn,
      });
      reasons[choice.reason] = (reasons[choice.reason] ?? 0) + 1;
      if (promptIds !== undefined && choice.uncached !== undefined)
        uncachedOf.set(promptIds, choice.uncached);
      return choice.order.map((view) => view.url);
    },
    lease(url, promptIds) {
      const replica = state(url);
      const known = promptIds === undefined ? undefined : uncachedOf.get(promptIds)?.get(url);
      const tokens = known ?? (promptIds === undefined ? 0 : promptIds.length);
      if (promptIds !== undefined) meanUncached += (tokens - meanUncached) / 16;
      replica.inFlight += 1;
      replica.waiting += 1;
      replica.queuedTokens += tokens;
      let waiting = true;
      let released = false;
      let queued = tokens;
      const overtaken = () => {
        replica.queue.delete(overtaken);
        replica.queuedTokens -= queued;
        queued = 0;
      };
      replica.queue.add(overtaken);
      const endWait = () => {
        if (!waiting) return;
        waiting = false;
        overtaken();
        replica.waiting -= 1;
      };
      /**
       * Its first token came, so those sent there before it that still wait were overtaken: the
       * replica took them first (it queues in order), so no prefill of theirs is ahead of a new
       * request. Stalled on their way back, they still wait (the in-flight bound applies).
       */
      const started = () => {
        if (!waiting) return;
        for (const earlier of replica.queue) {
          if (earlier === overtaken) break;
          earlier();
        }
        endWait();
      };
      return {
        url,
        breaker: replica.breaker,
        started,
        release() {
          if (released) return;
          released = true;
          endWait();
          replica.inFlight -= 1;
        },
      };
    },
    served(url, promptIds) {
      for (const hash of blockHashes(promptIds)) {
        const urls = affinity.get(hash) ?? [];
        affinity.delete(hash);
        // The last to serve it last (a list as long as the pool at most, rarely changed).
        if (urls.at(-1) !== url) {
          const at = urls.indexOf(url);
          if (at >= 0) urls.splice(at, 1);
          urls.push(url);
        }
        affinity.set(hash, urls);
      }
      while (affinity.size > AFFINITY_ENTRIES) {
        const oldest = affinity.keys().next();
        if (oldest.done) break;
        affinity.delete(oldest.value);
      }
    },
    draining(url, retryAfterSeconds) {
      const replica = state(url);
      replica.restUntil = now() + Math.min(MAX_DRAIN_MS, Math.max(1, retryAfterSeconds) * 1000);
      replica.needsProbe = true;
    },
    busy(url) {
      state(url).busyUntil = now() + BUSY_MS;
    },
    reported(url, { running, waiting }) {
      const replica = state(url);
      // The report counts this isolate's requests there too, the one it came with included;
      // without a running count (vLLM reports what waits), they stand for what runs.
      replica.others = Math.max(0, (running ?? replica.inFlight) + waiting - replica.inFlight);
      replica.othersWaiting = Math.max(0, waiting - replica.waiting);
      replica.reportedAt = now();
    },
    reasons: () => ({ ...reasons }),
    inFlight: () =>
      Object.fromEntries([...states].map(([url, replica]) => [url, replica.inFlight])),
  };
}
