// Apps for the generation tests: the shipped tiny LLM's manifest with its runtime switched
// (origin over vLLM, or the in-isolate loop), reading its graph from R2 where needed.
import { env } from "cloudflare:test";
import { createApp } from "../../src/app";
import { bundledModels } from "../../src/models/bundled";
import { TextGenerationSchema } from "../../src/models/manifest";
import { createRegistry } from "../../src/models/registry";
import { r2Key } from "../../src/models/store";
import { edgeRuntimes, type OriginConfig } from "../../src/runtime";
import { createServices } from "../../src/tasks";
import { KEY } from "./helpers";

const shipped = bundledModels.find((entry) => TextGenerationSchema.safeParse(entry.manifest).success);
if (shipped === undefined) throw new Error("the tiny LLM ships in the bundle");
export const llm = TextGenerationSchema.parse(shipped.manifest);
const files = shipped.files ?? {};

/** The tiny LLM on a vLLM origin at `url` (FP32 graph), nothing else changed. */
export function appOnOrigin(url: string, origin: Partial<OriginConfig> = {}) {
  const manifest = { ...llm, runtime: "origin", protocol: "vllm-completions", generation: { ...llm.generation, graph: "decoder-fp32" } };
  const registry = createRegistry([{ manifest, files }], {
    runtimeFor: edgeRuntimes({ url, apiKey: undefined, timeoutMs: 10_000, ...origin }),
  });
  return createApp(() => createServices(registry));
}

/** The same manifest with the in-isolate WASM loop; the FP32 graph comes from R2 (fetched from the origin stub's files). */
export async function appInIsolate(stubUrl: string) {
  const graph = llm.graphs["decoder-fp32"];
  if (graph === undefined) throw new Error("no FP32 graph");
  const key = r2Key(llm, graph.file);
  if ((await env.MODELS.head(key)) === null) {
    const bytes = await (await fetch(`${stubUrl}/_stub/files/${graph.file}`)).arrayBuffer();
    await env.MODELS.put(key, bytes);
  }
  const manifest = { ...llm, runtime: "wasm", generation: { ...llm.generation, graph: "decoder-fp32" } };
  const registry = createRegistry([{ manifest, files }], { bucket: env.MODELS, runtimeFor: edgeRuntimes() });
  return createApp(() => createServices(registry));
}

export type App = ReturnType<typeof createApp>;

export async function call(app: App, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return await app.request(
    `https://edge.test${path}`,
    { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify(body), ...(signal ? { signal } : {}) },
    env,
  );
}

/** The `data:` payloads of an SSE body. */
export async function sseEvents(response: Response): Promise<string[]> {
  const text = await response.text();
  return text.split("\n\n").filter((frame) => frame.startsWith("data: ")).map((frame) => frame.slice(6));
}

export interface StubRequest {
  prefix: string;
  steps: number;
  stepsAfterAbort: number;
  aborted: boolean;
  finished: boolean;
  maxTokens: number;
}

export async function stubRequests(stubUrl: string): Promise<StubRequest[]> {
  return (await fetch(`${stubUrl}/_stub/requests`)).json<StubRequest[]>();
}
