// ORCA's `endpoint-load-metrics` response header (Envoy, gRPC and the Gateway API Inference
// Extension read it) in its TEXT form, with vLLM's queue gauges as named metrics. vLLM and
// Triton send it only to a request that asks, with `endpoint-load-metrics-format: TEXT`; vLLM
// reports `num_requests_waiting` and `kv_cache_usage_perc`
// (vllm-project/vllm: vllm/entrypoints/openai/orca_metrics.py), the reference origin
// `num_requests_running` too.

export const LOAD_METRICS_HEADER = "endpoint-load-metrics";
/** The request header that asks a replica for the report, and its value. */
export const LOAD_METRICS_FORMAT_HEADER = "endpoint-load-metrics-format";
export const LOAD_METRICS_FORMAT = "TEXT";

export interface EndpointLoad {
  /** Requests queued, not yet running. */
  waiting: number;
  /** Requests running; absent where the replica does not say (vLLM). */
  running?: number;
}

/** The header's value for a replica's gauges. */
export function formatEndpointLoad({ running, waiting }: EndpointLoad): string {
  const members = [`named_metrics.num_requests_waiting=${waiting}`];
  if (running !== undefined) members.push(`named_metrics.num_requests_running=${running}`);
  return `TEXT ${members.join(", ")}`;
}

/** The gauges of a header's value; undefined when it is absent or does not say what waits. */
export function parseEndpointLoad(value: string | null): EndpointLoad | undefined {
  if (value === null || !value.startsWith("TEXT ")) return undefined;
  let running: number | undefined;
  let waiting: number | undefined;
  for (const pair of value.slice(5).split(",")) {
    const [key, number] = pair.trim().split("=");
    const parsed = Number(number);
    if (number === undefined || number === "" || !Number.isFinite(parsed) || parsed < 0) continue;
    if (key === "named_metrics.num_requests_running") running = parsed;
    else if (key === "named_metrics.num_requests_waiting") waiting = parsed;
  }
  if (waiting === undefined) return undefined;
  return running === undefined ? { waiting } : { running, waiting };
}

/** The report as response headers, for a request whose format header (`asked`) asked for it. */
export function endpointLoadHeaders(
  asked: string | undefined,
  load: EndpointLoad,
): Record<string, string> {
  return asked?.toUpperCase() === LOAD_METRICS_FORMAT
    ? { [LOAD_METRICS_HEADER]: formatEndpointLoad(load) }
    : {};
}
