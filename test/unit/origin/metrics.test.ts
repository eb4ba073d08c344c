// The origin's /metrics exposition read back by a real parser of Prometheus text format
// 0.0.4: every sample belongs to a family with a TYPE, and every vllm:* family carries one of
// vLLM's own names, types and labels.
import parsePrometheusTextFormat, { type PrometheusFamily } from "parse-prometheus-text-format";
import { describe, expect, it } from "vitest";
import { createDiffusionMetrics } from "../../../origin/engines/diffusion/metrics";
import { Registry } from "../../../src/protocols/prometheus";
import { createVllmMetrics } from "../../../origin/metrics/vllm-metrics";

/**
 * vLLM's metric families as its PrometheusStatLogger declares them (vllm-project/vllm,
 * vllm/v1/metrics/loggers.py, the v0.11 line where vllm:inter_token_latency_seconds replaced
 * vllm:time_per_output_token_seconds), named as prometheus_client writes them in format
 * 0.0.4: a counter declared "vllm:prompt_tokens" is exposed as "vllm:prompt_tokens_total".
 */
const VLLM_FAMILIES: Record<string, PrometheusFamily["type"]> = {
  "vllm:num_requests_running": "GAUGE",
  "vllm:num_requests_waiting": "GAUGE",
  "vllm:kv_cache_usage_perc": "GAUGE",
  "vllm:num_preemptions_total": "COUNTER",
  "vllm:prompt_tokens_total": "COUNTER",
  "vllm:generation_tokens_total": "COUNTER",
  "vllm:request_success_total": "COUNTER",
  "vllm:prefix_cache_queries_total": "COUNTER",
  "vllm:prefix_cache_hits_total": "COUNTER",
  "vllm:request_prompt_tokens": "HISTOGRAM",
  "vllm:request_generation_tokens": "HISTOGRAM",
  "vllm:iteration_tokens_total": "HISTOGRAM",
  "vllm:request_max_num_generation_tokens": "HISTOGRAM",
  "vllm:request_params_n": "HISTOGRAM",
  "vllm:request_params_max_tokens": "HISTOGRAM",
  "vllm:time_to_first_token_seconds": "HISTOGRAM",
  "vllm:time_per_output_token_seconds": "HISTOGRAM",
  "vllm:inter_token_latency_seconds": "HISTOGRAM",
  "vllm:e2e_request_latency_seconds": "HISTOGRAM",
  "vllm:request_queue_time_seconds": "HISTOGRAM",
  "vllm:request_inference_time_seconds": "HISTOGRAM",
  "vllm:request_prefill_time_seconds": "HISTOGRAM",
  "vllm:request_decode_time_seconds": "HISTOGRAM",
};

/** A registry with every origin metric recorded at least once, as a busy origin's would be. */
function exposition(): string {
  const registry = new Registry();
  const engine = {
    modelName: "tiny-llm",
    running: () => 2,
    waiting: () => 1,
    kvCacheBytes: () => 4096,
    prefixCacheBytes: () => 1024,
  };
  const vllm = createVllmMetrics(registry, () => [engine], 256);
  const diffusion = createDiffusionMetrics(registry, () => [{ model: "tiny-diffusion", value: 1 }]);
  const labels = vllm.labelsOf(engine);
  const { labelsOf: _, ...recorded } = vllm;
  for (const [name, metric] of Object.entries(recorded)) {
    if ("observe" in metric) metric.observe(labels, 0.5);
    else if (name === "requestSuccess") metric.inc({ ...labels, finished_reason: "length" });
    else metric.inc(labels);
  }
  for (const metric of Object.values(diffusion)) {
    if ("observe" in metric) metric.observe({ model_name: "tiny-diffusion" }, 0.5);
    else metric.inc({ model_name: "tiny-diffusion", outcome: "completed" });
  }
  return registry.render();
}

describe("origin /metrics (Prometheus text format 0.0.4)", () => {
  const families = parsePrometheusTextFormat(exposition());

  it("gives every sample a typed family: a counter's TYPE names its _total samples", () => {
    expect(families.length).toBeGreaterThan(20);
    for (const family of families) {
      expect(family.type, family.name).not.toBe("UNTYPED");
      expect(family.metrics.length, family.name).toBeGreaterThan(0);
      if (family.type === "COUNTER") expect(family.name).toMatch(/_total$/);
    }
    expect(new Set(families.map((family) => family.name)).size).toBe(families.length);
  });

  it("names its vllm:* families as vLLM does, with vLLM's types and labels", () => {
    const vllmFamilies = families.filter((family) => family.name.startsWith("vllm:"));
    expect(vllmFamilies.length).toBeGreaterThanOrEqual(15);
    for (const family of vllmFamilies) {
      expect(VLLM_FAMILIES[family.name], family.name).toBe(family.type);
      // This parser folds a histogram's labelled series into one, without their labels.
      if (family.type === "HISTOGRAM") continue;
      for (const { labels } of family.metrics) {
        const names = Object.keys(labels ?? {});
        const expected =
          family.name === "vllm:request_success_total"
            ? ["engine", "finished_reason", "model_name"]
            : ["engine", "model_name"];
        expect(names.sort(), family.name).toEqual(expected);
      }
    }
  });

  it("keeps its own families out of vLLM's namespace", () => {
    const own = families.filter((family) => !family.name.startsWith("vllm:"));
    for (const family of own) expect(family.name).toMatch(/^(origin_|process_)/);
  });
});
