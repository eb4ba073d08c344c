// Apps for the generation tests: the shipped tiny LLM's manifest with its runtime switched
// (origin over vLLM, or the in-isolate loop), reading its graph from R2 where needed.
import { env } from "cloudflare:test";
import { createApp } from "../../../src/app";
import { bundledModels } from "../../../src/models/bundled";
import { TextGenerationSchema } from "../../../src/models/manifest";
import { createRegistry } from "../../../src/models/registry";
import { r2Key } from "../../../src/models/store";
import { edgeRuntimes, type OriginConfig } from "../../../src/runtime";
import { createServices } from "../../../src/tasks";
import { KEY } from "./helpers";

const shipped = bundledModels.find(
  (entry) => TextGenerationSchema.safeParse(entry.manifest).success,
);
if (shipped === undefined) throw new Error("the tiny LLM ships in the bundle");
export const llm = TextGenerationSchema.parse(shipped.manifest);
const files = shipped.files ?? {};

/**
 * The tiny LLM on a vLLM origin at `url` (FP32 graph), nothing else changed (but what `change`
 * changes in its generation config).
 */
export function appOnOrigin(
  url: string,
  origin: Partial<OriginConfig> = {},
  change: (generation: typeof llm.generation) => typeof llm.generation = (same) => same,
) {
  const manifest = {
    ...llm,
    runtime: "origin",
    protocol: "vllm-completions",
    generation: change({ ...llm.generation, graph: "decoder-fp32" }),
  };
  const registry = createRegistry([{ manifest, files }], {
    runtimeFor: edgeRuntimes({ url, apiKey: undefined, timeoutMs: 10_000, ...origin }),
  });
  return createApp(() => createServices(registry));
}

/**
 * The same manifest with the in-isolate WASM loop; the FP32 graph comes from R2 (put there from the
 * stub's file route).
 */
export async function appInIsolate(stubUrl: string) {
  const graph = llm.graphs["decoder-fp32"];
  if (graph === undefined) throw new Error("no FP32 graph");
  const key = r2Key(llm, graph.file);
  if ((await env.MODELS.head(key)) === null) {
    const bytes = await (await fetch(`${stubUrl}/_stub/files/${graph.file}`)).arrayBuffer();
    await env.MODELS.put(key, bytes);
  }
  const manifest = {
    ...llm,
    runtime: "wasm",
    generation: { ...llm.generation, graph: "decoder-fp32" },
  };
  const registry = createRegistry([{ manifest, files }], {
    bucket: env.MODELS,
    runtimeFor: edgeRuntimes(),
  });
  return createApp(() => createServices(registry));
}

export type App = ReturnType<typeof createApp>;

/**
 * The two places a generation runs, by name: the origin at `origin.url`, and the in-isolate loop
 * (its graph from the stub at `origin.faultyUrl`).
 */
export function bothPlaces(
  origin: { url: string; faultyUrl: string } | null,
): [string, () => Promise<App>][] {
  return [
    ["origin", async () => appOnOrigin(origin?.url ?? "")],
    ["in-isolate WASM loop", async () => await appInIsolate(origin?.faultyUrl ?? "")],
  ];
}

export async function call(
  app: App,
  path: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<Response> {
  return await app.request(
    `https://edge.test${path}`,
    {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    },
    env,
  );
}

/** The `data:` payloads of an SSE body. */
export async function sseEvents(response: Response): Promise<string[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => frame.slice(6));
}

/**
 * The reference origin's counters that show whether it still decodes (its /metrics, vLLM's names).
 */
export interface OriginCounters {
  aborted: number;
  generationTokens: number;
  running: number;
  /** Prompt tokens the origin found in its prefix cache (vllm:prefix_cache_hits). */
  prefixCacheHits: number;
}

export async function originCounters(originUrl: string): Promise<OriginCounters> {
  const text = await (await fetch(`${originUrl}/metrics`)).text();
  const sum = (pattern: RegExp) =>
    [...text.matchAll(pattern)].reduce((total, match) => total + Number(match[1]), 0);
  return {
    aborted: sum(/^vllm:request_success_total\{[^}]*finished_reason="abort"[^}]*\} (\S+)$/gm),
    generationTokens: sum(/^vllm:generation_tokens_total(?:\{[^}]*\})? (\S+)$/gm),
    running: sum(/^vllm:num_requests_running(?:\{[^}]*\})? (\S+)$/gm),
    prefixCacheHits: sum(/^vllm:prefix_cache_hits_total(?:\{[^}]*\})? (\S+)$/gm),
  };
}

/**
 * Waits until the origin has counted `aborts` more aborts than `before`, then for its decoding
 * to stand still. (Its decoder runs on a thread of its own, a few tokens ahead of the HTTP
 * thread's relay: the abort's count comes after every token decoded before it.)
 */
export async function afterAbort(
  originUrl: string,
  before: OriginCounters,
  aborts = 1,
): Promise<{ counters: OriginCounters; tokensAfterAbort: number }> {
  let counters = await originCounters(originUrl);
  for (let i = 0; i < 100 && counters.aborted < before.aborted + aborts; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    counters = await originCounters(originUrl);
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  const later = await originCounters(originUrl);
  return { counters: later, tokensAfterAbort: later.generationTokens - counters.generationTokens };
}
