// How the edge reads the origin's stream, inside workerd against the vLLM stub on loopback:
// events that arrive in one read go out as one chunk whose text is theirs joined (never
// waiting for more), a failure read beside ids comes after their text, and each origin body
// is read to its end so that workerd reuses the connection.
import { describe, expect, inject, it } from "vitest";
import { appOnOrigin, call, sseEvents } from "../../support/workers/generation";
import type { StubRequest } from "../../support/vllm-stub-origin";

const origin = inject("llmOrigin");

interface Chunk {
  choices: {
    index: number;
    delta?: { content?: string; role?: string };
    finish_reason: string | null;
    logprobs: null;
  }[];
}

const chat = (extra: Record<string, unknown> = {}) => ({
  model: "tiny-llm",
  messages: [{ role: "user", content: "Tell me about the old house by the river." }],
  max_tokens: 32,
  temperature: 0,
  ...extra,
});

async function stubRequests(stubUrl: string, prefix: string): Promise<StubRequest[]> {
  const all = await (await fetch(`${stubUrl}/_stub/requests`)).json<StubRequest[]>();
  return all.filter((request) => request.prefix === prefix);
}

describe.skipIf(origin === null)("reading the origin's stream", () => {
  const stub = origin?.faultyUrl ?? "";

  it(
    "joins the events of one origin read into one chunk: deltas " +
      "joined equal the non-streamed text, chunk shapes valid",
    async () => {
      const whole = await (
        await call(appOnOrigin(`${stub}/ok`), "/v1/chat/completions", chat())
      ).json<{
        choices: { message: { content: string } }[];
        usage: { completion_tokens: number };
      }>();
      const response = await call(
        appOnOrigin(`${stub}/burst`),
        "/v1/chat/completions",
        chat({ stream: true, stream_options: { include_usage: true } }),
      );
      expect(response.status).toBe(200);
      const events = await sseEvents(response);
      expect(events.at(-1)).toBe("[DONE]");
      const chunks = events.slice(0, -1).map((event) => JSON.parse(event) as Chunk);
      const withText = chunks.filter((chunk) => (chunk.choices[0]?.delta?.content ?? "") !== "");
      for (const chunk of chunks.slice(0, -1)) {
        expect(chunk.choices).toHaveLength(1);
        expect(chunk.choices[0]).toMatchObject({ index: 0, logprobs: null });
      }
      expect(withText.map((chunk) => chunk.choices[0]?.delta?.content).join("")).toBe(
        whole.choices[0]?.message.content,
      );
      // The stub sent every token in one write: far fewer chunks than tokens reached the client.
      expect(whole.usage.completion_tokens).toBeGreaterThan(4);
      expect(withText.length).toBeLessThan(whole.usage.completion_tokens);
    },
  );

  it(
    "an origin that streams several ids per chunk (vLLM's --stream-interval): " +
      "the same text, and a stop string inside a chunk cuts it there",
    async () => {
      const base = {
        model: "tiny-llm",
        prompt: "The war had ended and the soldiers",
        temperature: 0,
        max_tokens: 40,
      };
      const full =
        (
          await (
            await call(appOnOrigin(`${stub}/ok`), "/v1/completions", base)
          ).json<{ choices: { text: string }[] }>()
        ).choices[0]?.text ?? "";
      const app = appOnOrigin(`${stub}/interval-5`);
      const streamed = async (extra: Record<string, unknown>) => {
        const events = await sseEvents(
          await call(app, "/v1/completions", { ...base, ...extra, stream: true }),
        );
        expect(events.at(-1)).toBe("[DONE]");
        return events
          .slice(0, -1)
          .map(
            (event) =>
              JSON.parse(event) as { choices: { text: string; finish_reason: string | null }[] },
          );
      };
      const chunks = await streamed({});
      expect(chunks.map((chunk) => chunk.choices[0]?.text ?? "").join("")).toBe(full);
      expect(chunks.length).toBeLessThan(40 / 2);
      // A stop string from the middle of the text: it ends somewhere inside a 5-id chunk.
      const at = Math.floor(full.length / 2);
      const stop = full.slice(at, at + 3);
      const stopped = await streamed({ stop: [stop] });
      const text = stopped.map((chunk) => chunk.choices[0]?.text ?? "").join("");
      expect(text).toBe(full.slice(0, full.indexOf(stop)));
      expect(stopped.at(-1)?.choices[0]?.finish_reason).toBe("stop");
      expect(await stubRequests(stub, "interval-5")).toHaveLength(2);
    },
  );

  it(
    "a failure read together with ids: their text first, " +
      "then the error event, then [DONE], and no retry",
    async () => {
      const response = await call(
        appOnOrigin(`${stub}/burst-fail-after-3`),
        "/v1/chat/completions",
        chat({ stream: true }),
      );
      expect(response.status).toBe(200);
      const events = await sseEvents(response);
      expect(events.at(-1)).toBe("[DONE]");
      const error = JSON.parse(events.at(-2) ?? "{}") as {
        error?: { message: string; code: string };
      };
      expect(error.error).toMatchObject({ code: "upstream_error" });
      expect(error.error?.message).toMatch(/illegal memory access/);
      const text = events
        .slice(0, -2)
        .map((event) => (JSON.parse(event) as Chunk).choices[0]?.delta?.content ?? "")
        .join("");
      expect(text.length).toBeGreaterThan(0);
      expect(await stubRequests(stub, "burst-fail-after-3")).toHaveLength(1);
    },
  );

  it(
    "reads the usage chunk after the finish for the prompt tokens " +
      "the origin's cache served, in the same read or a later one",
    async () => {
      type Usage = {
        prompt_tokens: number;
        completion_tokens: number;
        total_tokens: number;
        prompt_tokens_details?: { cached_tokens: number };
      };
      for (const prefix of ["cached-16", "burst-cached-16"]) {
        const app = appOnOrigin(`${stub}/${prefix}`);
        const whole = await (await call(app, "/v1/chat/completions", chat())).json<{
          usage: Usage;
        }>();
        expect(whole.usage.prompt_tokens_details, prefix).toEqual({ cached_tokens: 16 });
        const events = await sseEvents(
          await call(
            app,
            "/v1/chat/completions",
            chat({ stream: true, stream_options: { include_usage: true } }),
          ),
        );
        expect(events.at(-1)).toBe("[DONE]");
        const usage = (JSON.parse(events.at(-2)!) as { usage: Usage }).usage;
        expect(usage, prefix).toEqual({
          ...whole.usage,
          prompt_tokens_details: { cached_tokens: 16 },
        });
        // The Workers AI shape carries the same usage.
        const workersAi = await (
          await call(app, "/v1/run/tiny-llm", { messages: chat().messages, max_tokens: 32 })
        ).json<{ usage: Usage }>();
        expect(workersAi.usage.prompt_tokens_details, prefix).toEqual({ cached_tokens: 16 });
      }
    },
  );

  it(
    "an origin whose usage chunk is late: the response ends " +
      "without the cached-token count, not after the origin's delay",
    async () => {
      const app = appOnOrigin(`${stub}/usage-late`);
      const started = Date.now();
      const response = await call(app, "/v1/chat/completions", chat({ max_tokens: 4 }));
      expect(response.status).toBe(200);
      const body = await response.json<{
        usage: { completion_tokens: number; prompt_tokens_details?: unknown };
      }>();
      expect(body.usage.completion_tokens).toBeGreaterThan(0);
      expect(body.usage.prompt_tokens_details).toBeUndefined();
      // The stub holds its usage chunk 2 s: the edge waits at most 250 ms for it.
      expect(Date.now() - started).toBeLessThan(1500);
    },
  );

  it("reads each origin body to its end, so the next request reuses the connection", async () => {
    const app = appOnOrigin(`${stub}/reuse`);
    for (let i = 0; i < 3; i += 1) {
      const response = await call(
        app,
        "/v1/chat/completions",
        chat({ max_tokens: 4, stream: i % 2 === 0 }),
      );
      expect(response.status).toBe(200);
      await response.text();
      // The origin's tail (usage chunk, [DONE], the body's end) is drained in the background.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const requests = await stubRequests(stub, "reuse");
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((request) => request.clientPort)).size).toBe(1);
  });
});
