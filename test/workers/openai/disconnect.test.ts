// A client that leaves aborts the origin request, and the origin stops decoding within one
// step — through the real Worker entry (SELF.fetch into workerd, enable_request_signal on),
// observed at the reference origin's /metrics (vLLM's names: an abort counted in
// vllm:request_success_total{finished_reason="abort"}, and vllm:generation_tokens_total
// standing still after it). Two ways to leave: cancelling the response body, and aborting
// the request.
import { env, SELF } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { perModelKey } from "../../../src/compose";
import { KEY } from "../../support/workers/helpers";
import { afterAbort, originCounters } from "../../support/workers/generation";

const origin = inject("llmOrigin");
const MAX_TOKENS = 400;

const post = (path: string, body: unknown, signal?: AbortSignal) =>
  SELF.fetch(`https://edge.test${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });

async function openStream(
  signal?: AbortSignal,
  extra: Record<string, unknown> = {},
  path = "/v1/completions",
): Promise<{ response: Response; reader: ReadableStreamDefaultReader<Uint8Array> }> {
  const response = await SELF.fetch(`https://edge.test${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "tiny-llm",
      prompt: "The long story of the town began",
      max_tokens: MAX_TOKENS,
      temperature: 0,
      stream: true,
      ...extra,
    }),
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

  it(
    "aborting the request (request.signal under " +
      "enable_request_signal) aborts the origin request",
    async () => {
      const before = await originCounters(origin!.url);
      const controller = new AbortController();
      await openStream(controller.signal);
      controller.abort();
      const { counters, tokensAfterAbort } = await afterAbort(origin!.url, before);
      expect(counters.aborted).toBe(before.aborted + 1);
      expect(counters.running).toBe(0);
      expect(counters.generationTokens - before.generationTokens).toBeLessThan(MAX_TOKENS);
      expect(tokensAfterAbort).toBeLessThanOrEqual(1);
    },
  );

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

  it("the Responses API: cancelling its event stream aborts the origin request", async () => {
    const before = await originCounters(origin!.url);
    const { reader } = await openStream(
      undefined,
      {
        prompt: undefined,
        max_tokens: undefined,
        input: "The long story of the town began",
        max_output_tokens: MAX_TOKENS,
      },
      "/v1/responses",
    );
    await reader.cancel();
    const { counters, tokensAfterAbort } = await afterAbort(origin!.url, before);
    expect(counters.aborted).toBe(before.aborted + 1);
    expect(counters.running).toBe(0);
    expect(tokensAfterAbort).toBeLessThanOrEqual(1);
  });

  it(
    "Workers AI's /v1/run with tools (the model choosing): " +
      "cancelling its stream aborts the origin request",
    async () => {
      const before = await originCounters(origin!.url);
      // The tools take ~150 of the tiny LLM's 512 tokens of context: 300 new tokens leave room.
      const tools = [
        {
          name: "get_weather",
          parameters: { type: "object", properties: { city: { type: "string" } } },
        },
      ];
      const { reader } = await openStream(
        undefined,
        {
          model: undefined,
          prompt: undefined,
          messages: [{ role: "user", content: "The long story of the town began" }],
          tools,
          max_tokens: 300,
        },
        "/v1/run/tiny-llm",
      );
      await reader.cancel();
      const { counters, tokensAfterAbort } = await afterAbort(origin!.url, before);
      expect(counters.aborted).toBe(before.aborted + 1);
      expect(counters.running).toBe(0);
      expect(tokensAfterAbort).toBeLessThanOrEqual(1);
    },
  );

  it(
    "a batch of eight prompts, not streamed: the client leaving " +
      "aborts the six running, and the two queued never start",
    async () => {
      const before = await originCounters(origin!.url);
      const controller = new AbortController();
      const prompts = Array.from(
        { length: 8 },
        (_, i) => `The long story number ${i} of the town began`,
      );
      const answer = post(
        "/v1/completions",
        {
          model: "tiny-llm",
          prompt: prompts,
          max_tokens: MAX_TOKENS,
          temperature: 0,
          ignore_eos: true,
        },
        controller.signal,
      ).catch(() => undefined);
      let counters = await originCounters(origin!.url);
      for (let i = 0; i < 100 && counters.running < 6; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        counters = await originCounters(origin!.url);
      }
      expect(counters.running).toBe(6);
      controller.abort();
      await answer;
      const after = await afterAbort(origin!.url, before, 6);
      expect(after.counters.aborted).toBe(before.aborted + 6);
      expect(after.counters.running).toBe(0);
      expect(after.counters.generationTokens - before.generationTokens).toBeLessThan(
        6 * MAX_TOKENS,
      );
      // Nothing more starts once the six are gone.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await originCounters(origin!.url)).aborted).toBe(before.aborted + 6);
      expect((await originCounters(origin!.url)).generationTokens).toBe(
        after.counters.generationTokens,
      );
    },
  );
});
