// The decoder engine in-process, on the tiny LLM's FP32 graph: an aborted request leaves
// the batch before the next decode step (no token is decoded for it after its abort),
// while the request beside it keeps decoding, one row per step.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DecoderEngine } from "../../origin/engines/decoder/engine";
import type { GenerationParams } from "../../origin/engines/decoder/request";
import { createSession } from "../../origin/engines/onnx-session";
import { parseManifest } from "../../origin/manifests";
import { Registry } from "../../origin/metrics/prometheus";
import { createVllmMetrics } from "../../origin/metrics/vllm-metrics";
import { readVerifiedFile } from "../../origin/model-files";
import { GREEDY } from "../../src/generation/sampler";

const DIR = "models/tiny-llm";

describe("decoder engine", () => {
  let engine: DecoderEngine;
  const registry = new Registry();
  const counter = (name: string) => Number(/ (\S+)$/.exec(registry.render().split("\n").find((line) => line.startsWith(`${name}{`)) ?? " 0")?.[1]);

  beforeAll(async () => {
    const manifest = parseManifest(JSON.parse(readFileSync(`${DIR}/manifest.json`, "utf8")), "decoder-fp32");
    if (manifest.kind !== "generation") throw new Error("tiny-llm is not a text-generation manifest");
    const session = await createSession(await readVerifiedFile(DIR, manifest.graph.file, manifest.graph.sha256), { executionProviders: ["cpu"], intraOpThreads: 1 });
    const metrics = createVllmMetrics(registry, () => [], manifest.generation.contextLength);
    engine = new DecoderEngine("tiny-llm", session, manifest.generation, { maxBatch: 8, maxWaiting: 8, prefillTokensPerStep: 2048 }, metrics);
  });
  afterAll(() => undefined);

  const params = (prompt: number[]): GenerationParams => ({ promptIds: prompt, maxTokens: 200, minTokens: 0, sampling: GREEDY, seed: 1, stopTokenIds: [], ignoreEos: true });

  it("stops decoding an aborted request within one step; its neighbour decodes on alone", async () => {
    const abortA = new AbortController();
    const a = engine.submit(params([1, 5, 6, 7]), abortA.signal);
    const b = engine.submit(params([1, 8, 9]), new AbortController().signal);
    let received = 0;
    for await (const _ of a.steps) {
      if (++received === 3) break;
    }
    abortA.abort();
    const decodedAtAbort = a.generated.length;
    const [steps, rows] = [counter("origin_decode_steps_total"), counter("origin_decode_rows_total")];
    expect(engine.runningCount).toBe(1);
    const bAtAbort = b.generated.length;
    for await (const _ of b.steps) {
      if (b.generated.length >= bAtAbort + 5) break;
    }
    expect(a.generated.length).toBe(decodedAtAbort);
    const [stepsAfter, rowsAfter] = [counter("origin_decode_steps_total") - steps, counter("origin_decode_rows_total") - rows];
    expect(stepsAfter).toBeGreaterThanOrEqual(4);
    expect(rowsAfter).toBe(stepsAfter); // every step after the abort decoded b alone
  });
});
