// Mid-stream continuation in front of vLLM, inside workerd against the vLLM stub on loopback
// (test/support/vllm-stub-origin.ts: it ignores fields vLLM does not know, as vLLM does, and so
// never echoes x-output-prefix-tokens). A replica that fails after three tokens is replaced: a
// plain greedy chat goes on; one with a presence penalty, which needs the output so far read as
// output, is not taken from a replica that cannot say it did, and ends as with one origin.
import { describe, expect, inject, it } from "vitest";
import type { StubRequest } from "../../support/vllm-stub-origin";
import { appOnOrigin, call, sseEvents } from "../../support/workers/generation";

const origin = inject("llmOrigin");

const chat = (extra: Record<string, unknown> = {}) => ({
  model: "tiny-llm",
  messages: [{ role: "user", content: "Tell me about the old house by the river." }],
  max_tokens: 24,
  temperature: 0,
  stream: true,
  stream_options: { include_usage: true },
  ...extra,
});

interface Event {
  choices?: { finish_reason: string | null }[];
  usage?: { completion_tokens: number } | null;
  error?: { code: string };
}

describe.skipIf(origin === null)("continuing a stream on a vLLM replica", () => {
  const stub = origin?.faultyUrl ?? "";
  const pool = () =>
    appOnOrigin(`${stub}/fail-after-3`, {
      replicas: [
        { url: `${stub}/fail-after-3`, weight: 1000 },
        { url: `${stub}/ok`, weight: 1 },
      ],
    });
  const requestsTo = async (prefix: string) =>
    (await (await fetch(`${stub}/_stub/requests`)).json<StubRequest[]>()).filter(
      (request) => request.prefix === prefix,
    ).length;

  it("goes on for a plain chat, and ends one with a presence penalty with an error", async () => {
    const plain = await sseEvents(await call(pool(), "/v1/chat/completions", chat()));
    expect(plain.at(-1)).toBe("[DONE]");
    const events = plain.slice(0, -1).map((event) => JSON.parse(event) as Event);
    expect(events.filter((event) => event.error !== undefined)).toEqual([]);
    expect(events.flatMap((e) => e.choices?.map((c) => c.finish_reason) ?? [])).toContain("length");
    expect(events.find((event) => event.usage)?.usage?.completion_tokens).toBe(24);

    const before = await requestsTo("ok");
    const penalised = await sseEvents(
      await call(pool(), "/v1/chat/completions", chat({ presence_penalty: 0.5 })),
    );
    // The /ok replica was asked to continue, answered without the echo, and none of its tokens
    // was used: the stream ends with one error event, then [DONE].
    expect(await requestsTo("ok")).toBe(before + 1);
    expect(penalised.at(-1)).toBe("[DONE]");
    const errors = penalised
      .slice(0, -1)
      .map((event) => JSON.parse(event) as Event)
      .filter((event) => event.error !== undefined);
    expect(errors.map((event) => event.error!.code)).toEqual(["upstream_error"]);
  });
});
