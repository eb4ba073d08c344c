// The Models tab's reading of /metrics: one figure per metric name, labelled samples summed.
import { describe, expect, it } from "vitest";
import { parseMetrics } from "../../../playground/src/metrics-text";

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
      "",
    ].join("\n");
    expect(Object.fromEntries(parseMetrics(text))).toEqual({
      edge_model_loaded: 2,
      edge_wasm_memory_bytes: 16777216,
      "vllm:num_requests_running": 2,
    });
  });
});
