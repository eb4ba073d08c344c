// The decoder engines' metrics under vLLM's own names, labels and buckets, so dashboards built for
// vLLM read this origin unchanged.
import {
  Counter,
  Gauge,
  Histogram,
  type Registry,
  ScrapedCounter,
} from "../../src/protocols/prometheus";

export interface EngineGauges {
  modelName: string;
  running(): number;
  waiting(): number;
  kvCacheBytes(): number;
  prefixCacheBytes(): number;
}

/** vLLM's build_1_2_5_buckets(max_model_len): 1, 2, 5, 10, 20, 50, … up to the limit. */
export function buckets125(max: number): number[] {
  const out: number[] = [];
  for (let exponent = 0; ; exponent++) {
    for (const mantissa of [1, 2, 5]) {
      const value = mantissa * 10 ** exponent;
      if (value > max) return out;
      out.push(value);
    }
  }
}

const LATENCY = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
  480.0, 960.0, 1920.0, 7680.0,
];
const TTFT = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
  40.0, 80.0, 160.0, 640.0, 2560.0,
];
const PER_TOKEN = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
  40.0, 80.0,
];

export type VllmMetrics = ReturnType<typeof createVllmMetrics>;

type Labels = Readonly<Record<string, string>>;
/** The names of the metrics an engine records (not the gauges, read at scrape time). */
export type EngineMetricName = Exclude<keyof VllmMetrics, "labelsOf">;
/**
 * What an engine records into: the registry's own metrics in-process, or a recorder that
 * forwards each record to the HTTP thread when the engine runs on a worker (decoder/thread.ts).
 */
export type EngineMetrics = {
  [K in EngineMetricName]: VllmMetrics[K] extends Histogram
    ? { observe(labels: Labels, value: number): void }
    : { inc(labels: Labels, by?: number): void };
} & { labelsOf(engine: { modelName: string }): Labels };

/**
 * The decoder engines' metrics under vLLM's own names, labels and buckets, so dashboards
 * and autoscalers built for vLLM read this origin unchanged. Names and buckets follow
 * vllm-project/vllm vllm/v1/metrics/loggers.py (PrometheusStatLogger); labels are
 * model_name and engine. The running/waiting gauges are read from the engines at scrape
 * time, so they are exact after aborts (vLLM's lag: vllm-project/vllm#22545).
 */
export function createVllmMetrics(
  registry: Registry,
  engines: () => readonly EngineGauges[],
  maxModelLen: number,
) {
  // One labels object per model, reused on every token (the registry memoizes its key).
  const labels = new Map<string, Readonly<Record<string, string>>>();
  const labelsOf = (engine: { modelName: string }) => {
    let found = labels.get(engine.modelName);
    if (found === undefined)
      labels.set(
        engine.modelName,
        (found = Object.freeze({ model_name: engine.modelName, engine: "0" })),
      );
    return found;
  };
  const gauge = (name: string, help: string, read: (engine: EngineGauges) => number) =>
    registry.add(
      new Gauge(name, help, () =>
        engines().map((engine) => ({ labels: labelsOf(engine), value: read(engine) })),
      ),
    );
  gauge("vllm:num_requests_running", "Number of requests in model execution batches.", (e) =>
    e.running(),
  );
  gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", (e) =>
    e.waiting(),
  );
  gauge(
    "origin_kv_cache_bytes",
    "Bytes held by the decoder's preallocated KV-cache buffers.",
    (e) => e.kvCacheBytes(),
  );
  gauge(
    "origin_prefix_cache_bytes",
    "Bytes of keys/values kept for automatic " +
      "prefix caching (at most ORIGIN_PREFIX_CACHE_MIB).",
    (e) => e.prefixCacheBytes(),
  );
  // As prometheus_client's process collector (which vLLM's /metrics includes) names it; read
  // with microsecond resolution, unlike /proc's 10 ms ticks.
  registry.add(
    new ScrapedCounter(
      "process_cpu_seconds_total",
      "Total user and system CPU time spent in seconds.",
      () => {
        const { user, system } = process.cpuUsage();
        return (user + system) / 1e6;
      },
    ),
  );
  return {
    promptTokens: registry.add(
      new Counter("vllm:prompt_tokens", "Number of prefill tokens processed."),
    ),
    generationTokens: registry.add(
      new Counter("vllm:generation_tokens", "Number of generation tokens processed."),
    ),
    prefixCacheQueries: registry.add(
      new Counter(
        "vllm:prefix_cache_queries",
        "Prefix cache queries, in terms of number of queried tokens.",
      ),
    ),
    prefixCacheHits: registry.add(
      new Counter(
        "vllm:prefix_cache_hits",
        "Prefix cache hits, in terms of number of cached tokens.",
      ),
    ),
    requestSuccess: registry.add(
      new Counter("vllm:request_success", "Count of successfully processed requests."),
    ),
    requestPromptTokens: registry.add(
      new Histogram(
        "vllm:request_prompt_tokens",
        "Number of prefill tokens processed.",
        buckets125(maxModelLen),
      ),
    ),
    requestGenerationTokens: registry.add(
      new Histogram(
        "vllm:request_generation_tokens",
        "Number of generation tokens processed.",
        buckets125(maxModelLen),
      ),
    ),
    iterationTokens: registry.add(
      new Histogram(
        "vllm:iteration_tokens_total",
        "Histogram of number of tokens per engine_step.",
        [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384],
      ),
    ),
    timeToFirstToken: registry.add(
      new Histogram(
        "vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        TTFT,
      ),
    ),
    timePerOutputToken: registry.add(
      new Histogram(
        "vllm:time_per_output_token_seconds",
        "Histogram of time per output token in seconds.",
        PER_TOKEN,
      ),
    ),
    interTokenLatency: registry.add(
      new Histogram(
        "vllm:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.",
        PER_TOKEN,
      ),
    ),
    e2eLatency: registry.add(
      new Histogram(
        "vllm:e2e_request_latency_seconds",
        "Histogram of e2e request latency in seconds.",
        LATENCY,
      ),
    ),
    queueTime: registry.add(
      new Histogram(
        "vllm:request_queue_time_seconds",
        "Histogram of time spent in WAITING phase for request.",
        LATENCY,
      ),
    ),
    prefillTime: registry.add(
      new Histogram(
        "vllm:request_prefill_time_seconds",
        "Histogram of time spent in PREFILL phase for request.",
        LATENCY,
      ),
    ),
    decodeStepTime: registry.add(
      new Histogram(
        "origin_decode_step_seconds",
        "Time of one decode step (one onnxruntime run for the whole batch).",
        [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1],
      ),
    ),
    decodeStepCpu: registry.add(
      new Counter(
        "origin_decode_step_cpu_seconds",
        "Process CPU time spent in decode steps (robust " +
          "to a shared machine's load, unlike wall time).",
      ),
    ),
    prefillCpu: registry.add(
      new Counter("origin_prefill_cpu_seconds", "Process CPU time spent in prefills."),
    ),
    prefillRuns: registry.add(
      new Counter(
        "origin_prefill_runs",
        "Prefill runs (one onnxruntime run for the prompts admitted together): " +
          "vllm:request_prefill_time_seconds_count / this is the mean group.",
      ),
    ),
    decodeSteps: registry.add(
      new Counter(
        "origin_decode_steps",
        "Decode steps run (one onnxruntime run for every running request).",
      ),
    ),
    decodeRows: registry.add(
      new Counter(
        "origin_decode_rows",
        "Rows decoded, summed over steps: rows / steps is the mean batch.",
      ),
    ),
    labelsOf,
  };
}
