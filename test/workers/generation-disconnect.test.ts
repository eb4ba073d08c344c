// A client that leaves aborts the origin request, and the origin stops decoding within one
// step — through the real Worker entry (SELF.fetch into workerd, enable_request_signal on),
// observed at the origin's own records. Two ways to leave: cancelling the response body,
// and aborting the request.
import { env, SELF } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { perModelKey } from "../../src/compose";
import { KEY } from "./helpers";
import { stubRequests, type StubRequest } from "./generation-helpers";

const origin = inject("llmOrigin");
const MAX_TOKENS = 400;

async function openStream(signal?: AbortSignal): Promise<{ response: Response; reader: ReadableStreamDefaultReader<Uint8Array> }> {
  const response = await SELF.fetch("https://edge.test/v1/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "tiny-llm", prompt: "The long story of the town began", max_tokens: MAX_TOKENS, temperature: 0, stream: true }),
    ...(signal ? { signal } : {}),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  // Two chunks in: the origin is decoding.
  await reader.read();
  await reader.read();
  return { response, reader };
}

async function lastRequest(before: number): Promise<StubRequest | undefined> {
  for (let i = 0; i < 50; i += 1) {
    const requests = (await stubRequests(origin!.url)).slice(before);
    if (requests[0]?.finished) return requests[0];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (await stubRequests(origin!.url)).slice(before)[0];
}

describe.skipIf(origin === null)("client disconnect → origin abort", () => {
  // The Worker's composition root reads the per-model origin from env on first use.
  Reflect.set(env, perModelKey("ORIGIN_URL", "tiny-llm"), origin?.url ?? "");

  it("cancelling the streamed body aborts the origin request within one decode step", async () => {
    const before = (await stubRequests(origin!.url)).length;
    const { reader } = await openStream();
    await reader.cancel();
    const request = await lastRequest(before);
    expect(request?.aborted).toBe(true);
    expect(request?.steps).toBeLessThan(MAX_TOKENS);
    expect(request?.stepsAfterAbort).toBeLessThanOrEqual(1);
  });

  it("aborting the request (request.signal under enable_request_signal) aborts the origin request", async () => {
    const before = (await stubRequests(origin!.url)).length;
    const controller = new AbortController();
    await openStream(controller.signal);
    controller.abort();
    const request = await lastRequest(before);
    expect(request?.aborted).toBe(true);
    expect(request?.steps).toBeLessThan(MAX_TOKENS);
    expect(request?.stepsAfterAbort).toBeLessThanOrEqual(1);
  });
});
