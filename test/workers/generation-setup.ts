// Global setup (Node side) for the generation tests: a vLLM-compatible origin on loopback
// serving the tiny LLM's FP32 graph (test/support/vllm-stub-origin.ts — the stand-in
// until the reference origin's engine host is merged). Without models/tiny-llm the
// generation tests are skipped.
import { existsSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { startVllmStub } from "../support/vllm-stub-origin";

declare module "vitest" {
  export interface ProvidedContext {
    llmOrigin: { url: string } | null;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!existsSync("models/tiny-llm/manifest.json")) {
    project.provide("llmOrigin", null);
    return undefined;
  }
  const stub = await startVllmStub("models/tiny-llm", "decoder-fp32");
  project.provide("llmOrigin", { url: stub.url });
  return () => stub.close();
}
