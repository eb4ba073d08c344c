// The Models tab's traffic charts: rates and means between two scrapes of the edge's /metrics,
// the scrapes themselves left out, and a restarted isolate's counters read as counted anew.
import { describe, expect, it } from "vitest";
import { parseSamples } from "../../../playground/src/metrics-text";
import { apiRequests, trafficRates } from "../../../playground/src/traffic";

const scrape = (at: number, lines: string[]) => ({ at, samples: parseSamples(lines.join("\n")) });

const first = scrape(0, [
  "# TYPE edge_http_requests_total counter",
  'edge_http_requests_total{method="GET",route="/metrics",status="2xx"} 7',
  'edge_http_requests_total{method="POST",route="/v1/classify",status="2xx"} 10',
  'edge_http_requests_total{method="GET",route="/v1/fraud/cards/:card",status="4xx"} 2',
  'edge_http_request_duration_seconds_sum{method="GET",route="/metrics"} 0.7',
  'edge_http_request_duration_seconds_count{method="GET",route="/metrics"} 7',
  'edge_http_request_duration_seconds_sum{method="POST",route="/v1/classify"} 0.1',
  'edge_http_request_duration_seconds_count{method="POST",route="/v1/classify"} 10',
  'edge_generation_tokens_total{model_name="tiny-llm"} 100',
  'edge_time_to_first_token_seconds_sum{model_name="tiny-llm"} 0.5',
  'edge_time_to_first_token_seconds_count{model_name="tiny-llm"} 5',
]);
const second = scrape(2000, [
  'edge_http_requests_total{method="GET",route="/metrics",status="2xx"} 8',
  'edge_http_requests_total{method="POST",route="/v1/classify",status="2xx"} 16',
  'edge_http_requests_total{method="GET",route="/v1/fraud/cards/:card",status="4xx"} 4',
  'edge_http_request_duration_seconds_sum{method="GET",route="/metrics"} 9.7',
  'edge_http_request_duration_seconds_count{method="GET",route="/metrics"} 8',
  'edge_http_request_duration_seconds_sum{method="POST",route="/v1/classify"} 0.18',
  'edge_http_request_duration_seconds_count{method="POST",route="/v1/classify"} 18',
  'edge_generation_tokens_total{model_name="tiny-llm"} 160',
  'edge_time_to_first_token_seconds_sum{model_name="tiny-llm"} 0.8',
  'edge_time_to_first_token_seconds_count{model_name="tiny-llm"} 6',
]);

describe("traffic rates", () => {
  it("computes requests/s, mean latency, tokens/s and mean time to first token", () => {
    expect(apiRequests(first)).toBe(12);
    expect(apiRequests(second)).toBe(20);
    const rates = trafficRates(first, second);
    expect(rates.get("edge requests/s")).toBe(4);
    expect(rates.get("edge latency to headers, mean (ms)")).toBeCloseTo(10);
    expect(rates.get("edge tokens/s")).toBe(30);
    expect(rates.get("edge time to first token, mean (ms)")).toBeCloseTo(300);
  });

  it("reads a counter that went down as counted since a restart, and nothing as zero", () => {
    const restarted = scrape(4000, [
      'edge_http_requests_total{method="POST",route="/v1/classify",status="2xx"} 3',
    ]);
    const rates = trafficRates(second, restarted);
    expect(rates.get("edge requests/s")).toBe(1.5);
    expect(rates.get("edge latency to headers, mean (ms)")).toBe(0);
    expect(rates.get("edge time to first token, mean (ms)")).toBe(0);
  });
});
