// The isolate's traffic as the Models tab charts it: rates computed from two successive scrapes
// of /metrics (the edge's counters and histograms, docs/operations.md#metrics).
import type { Sample } from "./metrics-text";

export interface Scrape {
  /** When it was read, in ms (performance.now()). */
  at: number;
  samples: readonly Sample[];
}

/** The scrapes themselves are requests too: they are left out of what the charts show. */
const api = (sample: Sample) => sample.labels.route !== "/metrics";

function total(scrape: Scrape, name: string, keep: (sample: Sample) => boolean = () => true) {
  let sum = 0;
  for (const sample of scrape.samples)
    if (sample.name === name && keep(sample)) sum += sample.value;
  return sum;
}

/** A counter's growth between scrapes; after a restart (it went down), what it counted since. */
const growth = (before: number, after: number) => (after >= before ? after - before : after);

/** The API requests this isolate has counted (without the scrapes), from one scrape. */
export function apiRequests(scrape: Scrape): number {
  return total(scrape, "edge_http_requests_total", api);
}

/**
 * Requests/s, their mean duration, generated tokens/s and the mean time to first token between
 * two scrapes (means are 0 where nothing happened).
 */
export function trafficRates(before: Scrape, after: Scrape): Map<string, number> {
  const seconds = Math.max(0.001, (after.at - before.at) / 1000);
  const grew = (name: string, keep?: (sample: Sample) => boolean) =>
    growth(total(before, name, keep), total(after, name, keep));
  const meanMs = (histogram: string, keep?: (sample: Sample) => boolean) => {
    const count = grew(`${histogram}_count`, keep);
    return count === 0 ? 0 : (grew(`${histogram}_sum`, keep) / count) * 1000;
  };
  return new Map([
    ["edge requests/s", grew("edge_http_requests_total", api) / seconds],
    ["edge latency to headers, mean (ms)", meanMs("edge_http_request_duration_seconds", api)],
    ["edge tokens/s", grew("edge_generation_tokens_total") / seconds],
    ["edge time to first token, mean (ms)", meanMs("edge_time_to_first_token_seconds")],
  ]);
}
