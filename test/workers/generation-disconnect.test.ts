// A client that leaves aborts the origin request, and the origin stops decoding within one
// step — through the real Worker entry (SELF.fetch into workerd, enable_request_signal on),
// observed at the reference origin's /metrics (vLLM's names: an abort counted in
// vllm:request_success_total{finished_reason="abort"}, and vllm:generation_tokens_total
// standing still after it). Two ways to leave: cancelling the response body, and aborting
// the request.
import { env, SELF } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { perModelKey } from "../../src/compose";
import { KEY } from "./helpers";
import { afterAbort, originCounters } from "./generation-helpers";

const origin = inject("llmOrigin");
const MAX_TOKENS = 400;

async function openStream(signal?: AbortSignal, extra: Record<string, unknown> = {}): Promise<{ response: Response; reader: ReadableStreamDefaultReader<Uint8Array> }> {
  const response = await SELF.fetch("https://edge.test/v1/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "tiny-llm", prompt: "The long story of the town began", max_tokens: MAX_TOKENS, temperature: 0, stream: true, ...extra }),
    ...(signal ? { signal } : {}),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  // Two chunks in: the origin is decoding.
  await reader.read();
  await reader.read();
  return { response, reader };
}

describe.skipIf(origin === null)("client disconnect → origin abort", () => {
  // The Worker's composition root reads the per-model origin from env on first use.
  Reflect.set(env, perModelKey("ORIGIN_URL", "tiny-llm"), origin?.url ?? "");

  it("cancelling the streamed body aborts the origin request within one decode step", async () => {
    const before = await originCounters(origin!.url);
    const { reader } = await openStream();
    await reader.cancel();
    const { counters, tokensAfterAbort } = await afterAbort(origin!.url, before);
    expect(counters.aborted).toBe(before.aborted + 1);
    expect(counters.running).toBe(0);
    expect(counters.generationTokens - before.generationTokens).toBeLessThan(MAX_TOKENS);
    expect(tokensAfterAbort).toBeLessThanOrEqual(1);
  });

  it("aborting the request (request.signal under enable_request_signal) aborts the origin request", async () => {
    const before = await originCounters(origin!.url);
    const controller = new AbortController();
    await openStream(controller.signal);
    controller.abort();
    const { counters, tokensAfterAbort } = await afterAbort(origin!.url, before);
    expect(counters.aborted).toBe(before.aborted + 1);
    expect(counters.running).toBe(0);
    expect(counters.generationTokens - before.generationTokens).toBeLessThan(MAX_TOKENS);
    expect(tokensAfterAbort).toBeLessThanOrEqual(1);
  });

  it("with n choices, cancelling the body aborts every choice's origin request", async () => {
    const before = await originCounters(origin!.url);
    const { reader } = await openStream(undefined, { n: 3, temperature: 1, seed: 3 });
    await reader.cancel();
    const { counters, tokensAfterAbort } = await afterAbort(origin!.url, before, 3);
    expect(counters.aborted).toBe(before.aborted + 3);
    expect(counters.running).toBe(0);
    expect(counters.generationTokens - before.generationTokens).toBeLessThan(3 * MAX_TOKENS);
    expect(tokensAfterAbort).toBeLessThanOrEqual(3);
  });
});
