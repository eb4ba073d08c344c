// ORCA's `endpoint-load-metrics` response header (Envoy, gRPC and the Gateway API Inference
// Extension read it) in its TEXT form, carrying vLLM's two queue gauges as named metrics:
// `TEXT named_metrics.num_requests_running=3, named_metrics.num_requests_waiting=0`.

export const LOAD_METRICS_HEADER = "endpoint-load-metrics";

export interface EndpointLoad {
  running: number;
  waiting: number;
}

/** The header's value for a replica's gauges. */
export function formatEndpointLoad({ running, waiting }: EndpointLoad): string {
  return (
    `TEXT named_metrics.num_requests_running=${running}, ` +
    `named_metrics.num_requests_waiting=${waiting}`
  );
}

/** The gauges of a header's value; undefined when it is absent or does not carry both. */
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
  return running === undefined || waiting === undefined ? undefined : { running, waiting };
}
