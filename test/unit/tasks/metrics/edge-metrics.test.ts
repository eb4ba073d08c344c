// The edge's request and generation counters, exactly, in a fresh module: Prometheus text that
// the real parser reads, a bounded method label, and histograms cumulative up to +Inf.
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { describe, expect, it } from "vitest";
import {
  recordFirstToken,
  recordRequest,
  recordTokens,
  renderEdgeMetrics,
} from "../../../../src/tasks/metrics/edge-metrics";
import { metricValue } from "../../../support/metric-value";

describe("edge metrics", () => {
  it("counts requests, tokens and first tokens exactly, in valid exposition text", () => {
    recordRequest("POST", "/v1/classify", 200, 0.003);
    recordRequest("POST", "/v1/classify", 201, 0.2);
    recordRequest("POST", "/v1/classify", 503, 0.02);
    recordRequest("BREW", "/*", 404, 0.0001);
    recordTokens("tiny-llm", 12, 5);
    recordTokens("tiny-llm", 3, 0);
    recordFirstToken("tiny-llm", 0.05);
    const text = renderEdgeMetrics();

    const families = parsePrometheusTextFormat(text);
    expect(families.map((family) => family.name)).toEqual([
      "edge_http_requests_total",
      "edge_http_request_duration_seconds",
      "edge_prompt_tokens_total",
      "edge_generation_tokens_total",
      "edge_time_to_first_token_seconds",
    ]);
    const classify = 'method="POST",route="/v1/classify"';
    expect(metricValue(text, "edge_http_requests_total", `{${classify},status="2xx"}`)).toBe(2);
    expect(metricValue(text, "edge_http_requests_total", `{${classify},status="5xx"}`)).toBe(1);
    expect(metricValue(text, "edge_http_requests_total", 'method="other"')).toBe(1);
    expect(text).not.toContain("BREW");
    expect(metricValue(text, "edge_http_request_duration_seconds_count", classify)).toBe(3);
    expect(metricValue(text, "edge_http_request_duration_seconds_sum", classify)).toBeCloseTo(
      0.223,
    );
    expect(
      metricValue(text, "edge_http_request_duration_seconds_bucket", `${classify},le="0.005"}`),
    ).toBe(1);
    expect(
      metricValue(text, "edge_http_request_duration_seconds_bucket", `${classify},le="+Inf"}`),
    ).toBe(3);
    expect(metricValue(text, "edge_prompt_tokens_total", 'model_name="tiny-llm"')).toBe(15);
    expect(metricValue(text, "edge_generation_tokens_total", 'model_name="tiny-llm"')).toBe(5);
    expect(metricValue(text, "edge_time_to_first_token_seconds_count", "tiny-llm")).toBe(1);
    expect(metricValue(text, "edge_time_to_first_token_seconds_bucket", 'le="0.04"}')).toBe(0);
    expect(metricValue(text, "edge_time_to_first_token_seconds_bucket", 'le="0.06"}')).toBe(1);
  });
});
