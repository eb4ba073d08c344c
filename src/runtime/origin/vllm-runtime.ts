// The generation capability over a vLLM-compatible origin (vLLM itself, or the reference origin in
// origin/), one URL or a pool of replicas: token ids out, token ids back, streamed; a replica that
// fails is stepped around, before the first token and after it.
import { ServiceError } from "../../errors/service-error";
import type { GenerationCapability, GenerationRequest, InferenceRuntime } from "../runtime";
import { createBreakers, type Breakers } from "./circuit-breaker";
import { splitVersion, stickyHash, versionOrder } from "./canary-config";
import { canaryMonitor, type CanaryMonitor } from "./canary-monitor";
import { CannotContinue, continuation } from "./continuation";
import { replicasOf, type OriginConfig } from "./origin-config";
import { noteRefusal, refused, RETRY_DELAYS_MS, retryable } from "./replica-failover";
import { createFleet, type Fleet } from "./replica-pool";
import { attemptGeneration } from "./vllm-attempt";

export interface VllmRuntimeOptions {
  model: { name: string };
  contextLength: number;
  origin: OriginConfig;
  /** The breakers of the origins it calls (default: its own). */
  breakers?: Breakers;
  /** What it knows of the replicas it calls (default: its own, over `breakers`). */
  fleet?: Fleet;
  /** Attempts before the first token on one replica (1 = no retry). */
  attempts?: number;
  /** This isolate's watch over canaries (default: the isolate's). */
  canaries?: CanaryMonitor;
}

/**
 * A runtime whose model decodes on a vLLM-compatible origin.
 *
 * Each request's replicas come ranked by the fleet (prefix affinity from the prompt's ids, load,
 * health). Before the first token, a replica that refuses (429, 503: it is marked busy or
 * draining), fails or times out hands the request to the next; with one replica the rules are the
 * single origin's: failures retried after 100 and 400 ms, refusals surfaced with their
 * Retry-After, the circuit breaker failing fast while it is down. After tokens were sent, a
 * replica that fails or stalls is replaced by another that continues from the prompt and the ids
 * already generated (when the request allows it: continuation.ts); with no replica to continue,
 * the error ends the stream as before. The caller's signal (the client leaving, a stop string
 * matched) aborts the call in progress.
 */
export function createVllmRuntime(options: VllmRuntimeOptions): InferenceRuntime {
  const { model, origin, breakers = createBreakers() } = options;
  const fleet = options.fleet ?? createFleet({ breakers });
  const attempts = options.attempts ?? 1 + RETRY_DELAYS_MS.length;
  const canaries = options.canaries ?? canaryMonitor;

  const generation: GenerationCapability = {
    contextLength: options.contextLength,
    async *generate(request: GenerationRequest, signal) {
      if (request.maxTokens <= 0 && request.promptLogprobs === undefined) {
        // Nothing to generate and nothing to score: no request to make.
        yield { tokenIds: [], finishReason: "length" };
        return;
      }
      const pool = replicasOf(origin, model.name);
      const ranked = fleet.choose(pool, request.promptIds, "/health");
      const { canary } = origin;
      // Version labels count (and are named in the response) only while a canary is configured.
      const versionOf = new Map(
        canary === undefined ? [] : pool.map((replica) => [replica.url, replica.version]),
      );
      // Two versions side by side: the request's sticky version first, the other as failover
      // (none once the canary is rolled back).
      const order =
        canary === undefined
          ? ranked
          : versionOrder(
              ranked,
              pool,
              splitVersion(stickyHash(canary, request), canary),
              canary,
              canaries.rolledBack(model.name, canary),
            );
      /** Counts an attempt's outcome for its version (the canary's may roll it back). */
      const outcome = (url: string, ok: boolean, latencyMs: number) => {
        const version = versionOf.get(url);
        if (canary !== undefined && version !== undefined)
          canaries.record(model.name, canary, version, ok, latencyMs);
      };
      const alone = order.length === 1;
      const generated: number[] = [];
      const given = new Set<string>();
      let current = request;
      let accepted = false;
      let lastError: unknown;
      const tries = Math.max(attempts, order.length);
      for (let attempt = 0, retry = 0; attempt < tries; attempt += 1) {
        const url =
          order.find((candidate) => !given.has(candidate)) ?? order[attempt % order.length]!;
        const again = given.has(url);
        if (again) {
          // Every replica had its turn: wait as a single origin's retry does.
          await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[retry] ?? 1000));
          retry += 1;
        }
        given.add(url);
        signal.throwIfAborted();
        const lease = fleet.lease(url, request.promptIds);
        const before = generated.length;
        const startedAt = Date.now();
        /** Its time to first token, once it came; the attempt counts once, when it ends. */
        let firstTokenMs: number | undefined;
        let counted = false;
        try {
          // A replica is checked when this request first turns to it; its retries are not.
          if (!again) lease.breaker.check();
          const steps = attemptGeneration(
            {
              url,
              model: model.name,
              origin,
              breaker: lease.breaker,
              onLoad: (load) => fleet.reported(url, load),
            },
            current,
            signal,
          );
          for await (const step of steps) {
            if (step.tokenIds.length === 0 && step.finishReason === undefined) {
              const version = versionOf.get(url);
              if (!accepted)
                yield version === undefined ? step : { ...step, modelVersion: version };
              accepted = true;
              continue;
            }
            firstTokenMs ??= Date.now() - startedAt;
            lease.started();
            for (const id of step.tokenIds) generated.push(id);
            if (step.finishReason !== undefined) {
              // The replica caches the answer's blocks too (all but its last token's): the
              // next turn, which resends it, finds them there.
              fleet.served(url, [...request.promptIds, ...generated.slice(0, -1)]);
              if (current !== request && step.cachedTokens !== undefined)
                step.cachedTokens = Math.min(step.cachedTokens, request.promptIds.length);
            }
            yield step;
            if (step.finishReason !== undefined) return;
          }
          throw new ServiceError(502, "upstream_error", "The GPU origin's steps ended early");
        } catch (error) {
          if (signal.aborted) throw signal.reason;
          // A replica that cannot continue this output (vLLM): the stream ends as with one origin.
          if (error instanceof CannotContinue) throw error;
          // Before or after its first token, the replica failed or refused (not the input's
          // fault): the attempt counts as failed.
          counted = true;
          if (refused(error) || retryable(error)) outcome(url, false, Date.now() - startedAt);
          if (refused(error) && !alone) noteRefusal(fleet, url, lease.breaker, error);
          else if (!retryable(error)) throw error;
          lastError = error;
          if (generated.length === 0) continue;
          // After the first token: another replica continues (continuation.ts).
          if (alone) throw error;
          if (generated.length > before) given.clear();
          given.add(url);
          if (generated.length >= request.maxTokens) {
            yield { tokenIds: [], finishReason: "length" };
            return;
          }
          current = continuation(request, generated);
        } finally {
          lease.release();
          // Finished, or ended by the caller (a stop string, the client leaving) after tokens.
          if (!counted && firstTokenMs !== undefined) outcome(url, true, firstTokenMs);
        }
      }
      throw lastError;
    },
  };

  return {
    kind: "origin",
    // The origin is asked at generation time; nothing to verify up front without costing a request.
    async load() {
      replicasOf(origin, model.name);
    },
    generation,
  };
}
