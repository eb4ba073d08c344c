// This isolate's request and generation counters for /metrics, named as Prometheus's HTTP
// conventions and vLLM's token metrics name theirs: kept in memory, rendered at scrape time.
import { keep, memoMap } from "../../memos";
import { Counter, Histogram, Registry } from "../../protocols/prometheus";

type Labels = Readonly<Record<string, string>>;

/** Prometheus's default buckets, with 1 and 2.5 ms for the edge's WASM models, and 30/60 s. */
const DURATION = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** vLLM's vllm:time_to_first_token_seconds buckets (vllm/v1/metrics/loggers.py). */
const TTFT = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
  40.0, 80.0, 160.0, 640.0, 2560.0,
];
/** A client may send any method; the label keeps the standard ones (bounded cardinality). */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

const registry = keep("metrics.edge", new Registry());
const requests = registry.add(
  new Counter(
    "edge_http_requests",
    "Requests this isolate answered, by method, route template and status class.",
  ),
);
const duration = registry.add(
  new Histogram(
    "edge_http_request_duration_seconds",
    "Time from a request's arrival to its response's headers, by method and route template.",
    DURATION,
  ),
);
const promptTokens = registry.add(
  new Counter("edge_prompt_tokens", "Prompt tokens of the generations this isolate ran."),
);
const generationTokens = registry.add(
  new Counter("edge_generation_tokens", "Tokens this isolate's generations produced."),
);
const firstToken = registry.add(
  new Histogram(
    "edge_time_to_first_token_seconds",
    "Time from a generation's start at the edge (prompt tokenized) to its first token.",
    TTFT,
  ),
);

// One frozen labels object per series, reused on every request: the registry memoizes its key
// by object, so the hot path is a string concatenation and two map lookups.
const labelSets = memoMap<string, Labels>("metrics.label-sets");
function labelsOf(key: string, make: () => Labels): Labels {
  let labels = labelSets.get(key);
  if (labels === undefined) labelSets.set(key, (labels = Object.freeze(make())));
  return labels;
}

/** Counts a request that ended with `status` after `seconds`, under its route template. */
export function recordRequest(method: string, route: string, status: number, seconds: number) {
  const verb = METHODS.has(method) ? method : "other";
  const statusClass = `${Math.trunc(status / 100)}xx`;
  requests.inc(
    labelsOf(`r ${verb} ${route} ${statusClass}`, () => ({
      method: verb,
      route,
      status: statusClass,
    })),
  );
  duration.observe(
    labelsOf(`d ${verb} ${route}`, () => ({ method: verb, route })),
    seconds,
  );
}

const modelLabels = (model: string) => labelsOf(`m ${model}`, () => ({ model_name: model }));

/** A generation's first token came `seconds` after it started. */
export function recordFirstToken(model: string, seconds: number): void {
  firstToken.observe(modelLabels(model), seconds);
}

/** A generation that started ended (however): its prompt and the tokens it produced. */
export function recordTokens(model: string, prompt: number, generated: number): void {
  const labels = modelLabels(model);
  promptTokens.inc(labels, prompt);
  generationTokens.inc(labels, generated);
}

/** These metrics in Prometheus text format 0.0.4 (ends with a newline). */
export function renderEdgeMetrics(): string {
  return registry.render();
}
