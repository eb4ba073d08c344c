// What the decoder engine records into vLLM's metrics at each admission, prefill and step
// (origin/metrics/vllm-metrics.ts names them), kept apart from its scheduling.
import type { EngineMetrics } from "../../metrics/vllm-metrics";
import { type Admission, scored } from "./admission";
import { BLOCK } from "./prefix-cache";

type Labels = ReturnType<EngineMetrics["labelsOf"]>;

/** Requests that left the queue for the batch; `real`: their prompt tokens to compute. */
export function recordAdmitted(
  metrics: EngineMetrics,
  labels: Labels,
  admitted: readonly Admission[],
  real: number,
  prefixCaching: boolean,
): void {
  for (const { request, cached } of admitted) {
    metrics.queueTime.observe(labels, (performance.now() - request.arrivedAt) / 1000);
    metrics.promptTokens.inc(labels, request.params.promptIds.length);
    // vLLM counts no prefix-cache query for a prompt it does not look up.
    if (prefixCaching && !scored(request)) {
      metrics.prefixCacheQueries.inc(labels, request.params.promptIds.length);
      metrics.prefixCacheHits.inc(labels, cached.length * BLOCK);
    }
  }
  if (admitted.length > 0) metrics.iterationTokens.observe(labels, real);
}

/** One prefill run of `requests` requests, `seconds` long, `cpu` seconds of this thread. */
export function recordPrefill(
  metrics: EngineMetrics,
  labels: Labels,
  requests: number,
  seconds: number,
  cpu: number,
): void {
  // vLLM's prefill time is per request: each request of the group spent the run in prefill.
  for (let i = 0; i < requests; i++) metrics.prefillTime.observe(labels, seconds);
  metrics.prefillRuns.inc(labels);
  metrics.prefillCpu.inc(labels, cpu);
}

/** One decode step over `rows` rows. */
export function recordStep(
  metrics: EngineMetrics,
  labels: Labels,
  rows: number,
  seconds: number,
  cpu: number,
): void {
  metrics.decodeStepTime.observe(labels, seconds);
  metrics.decodeStepCpu.inc(labels, cpu);
  metrics.decodeSteps.inc(labels);
  metrics.decodeRows.inc(labels, rows);
  metrics.iterationTokens.observe(labels, rows);
}
