// ORCA's endpoint-load-metrics header as the origin writes it and the edge reads it
// (src/protocols/endpoint-load-metrics.ts), and as vLLM writes it: vLLM answers a request that
// sent `endpoint-load-metrics-format: TEXT` with its waiting queue and KV cache usage, no running
// count (vllm-project/vllm: vllm/entrypoints/openai/orca_metrics.py, create_orca_header and
// get_named_metrics_from_prometheus: `TEXT named_metrics.kv_cache_usage_perc=…,
// named_metrics.num_requests_waiting=…`, values as Python floats).
import { describe, expect, it } from "vitest";
import {
  formatEndpointLoad,
  parseEndpointLoad,
} from "../../../src/protocols/endpoint-load-metrics";

describe("endpoint-load-metrics", () => {
  it("reads back what it writes, and other members beside them", () => {
    const value = formatEndpointLoad({ running: 3, waiting: 7 });
    expect(value).toBe(
      "TEXT named_metrics.num_requests_waiting=7, named_metrics.num_requests_running=3",
    );
    expect(parseEndpointLoad(value)).toEqual({ running: 3, waiting: 7 });
    expect(
      parseEndpointLoad(
        "TEXT cpu_utilization=0.3, named_metrics.num_requests_waiting=0, " +
          "named_metrics.num_requests_running=12",
      ),
    ).toEqual({ running: 12, waiting: 0 });
  });

  it("reads vLLM's report: what waits, with no running count", () => {
    expect(
      parseEndpointLoad(
        "TEXT named_metrics.kv_cache_usage_perc=0.4125, named_metrics.num_requests_waiting=3.0",
      ),
    ).toEqual({ waiting: 3 });
    expect(formatEndpointLoad({ waiting: 2 })).toBe("TEXT named_metrics.num_requests_waiting=2");
  });

  it.each([
    null,
    "",
    "JSON {}",
    "TEXT named_metrics.num_requests_running=3",
    "TEXT named_metrics.kv_cache_usage_perc=0.5",
    "TEXT named_metrics.num_requests_waiting=-1",
    "TEXT named_metrics.num_requests_waiting=x, named_metrics.num_requests_running=0",
  ])("gives nothing for %s", (value) => {
    expect(parseEndpointLoad(value)).toBeUndefined();
  });
});
