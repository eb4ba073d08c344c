// The Models tab's reading of /metrics: samples with their labels; one gauge figure per metric
// name, labelled samples summed, the traffic families and histogram parts left to the rates.
import { describe, expect, it } from "vitest";
import { parseMetrics, parseSamples } from "../../../playground/src/metrics-text";

describe("parseMetrics", () => {
  it("sums a metric's labelled samples and skips comments", () => {
    const text = [
      "# HELP edge_model_loaded Whether the model is loaded and verified in this isolate.",
      "# TYPE edge_model_loaded gauge",
      'edge_model_loaded{model="spam-classifier"} 1',
      'edge_model_loaded{model="digit-classifier"} 0',
      'edge_model_loaded{model="fraud-gru"} 1',
      "edge_wasm_memory_bytes 16777216",
      "vllm:num_requests_running 2",
      "broken_line NaN",
      'edge_http_requests_total{method="GET",route="/v1/classify",status="2xx"} 4',
      'vllm:e2e_request_latency_seconds_bucket{le="0.3"} 1',
      "",
    ].join("\n");
    expect(Object.fromEntries(parseMetrics(text))).toEqual({
      edge_model_loaded: 2,
      edge_wasm_memory_bytes: 16777216,
      "vllm:num_requests_running": 2,
    });
  });

  it("reads each sample's labels, escapes undone", () => {
    const text = 'edge_http_requests_total{method="GET",route="/a\\"b",status="2xx"} 4\n';
    expect(parseSamples(text)).toEqual([
      {
        name: "edge_http_requests_total",
        labels: { method: "GET", route: '/a"b', status: "2xx" },
        value: 4,
      },
    ]);
  });
});
