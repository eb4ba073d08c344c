// Global setup (Node side) for the generation tests: the reference origin (origin/, the
// engine host with continuous batching) as a real process on loopback, serving the tiny
// LLM's FP32 graph for the main paths; beside it a small vLLM-compatible stub whose path
// prefixes misbehave on purpose (429, 503, mid-stream failure, silence, flakiness) and
// which hands the FP32 graph to the in-isolate tests. Without models/tiny-llm the
// generation tests are skipped.
import { existsSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { startOrigin } from "../../../scripts/lib/origin.mjs";
import { startVllmStub } from "../vllm-stub-origin";

declare module "vitest" {
  export interface ProvidedContext {
    /**
     * url: the reference origin; faultyUrl: the stub (prefix /429, /503, /fail-after-N, /silent,
     * /flaky-N, /ok).
     */
    llmOrigin: { url: string; faultyUrl: string } | null;
  }
}

export default async function setup(
  project: TestProject,
): Promise<(() => Promise<void>) | undefined> {
  if (!existsSync("models/tiny-llm/manifest.json")) {
    project.provide("llmOrigin", null);
    return undefined;
  }
  const [origin, stub] = await Promise.all([
    startOrigin({ ORIGIN_GENERATION_GRAPH: "decoder-fp32" }),
    startVllmStub("models/tiny-llm", "decoder-fp32"),
  ]);
  project.provide("llmOrigin", { url: origin.url, faultyUrl: stub.url });
  return async () => {
    await Promise.all([origin.stop(), stub.close()]);
  };
}
