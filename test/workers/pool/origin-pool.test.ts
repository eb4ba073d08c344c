// A model served by a pool of real reference origins on loopback, inside workerd: a conversation
// keeps its replica (its prefix is cached there), a dead or draining replica is stepped around
// before the first token, and a replica SIGKILLed or stalled mid-stream is replaced by another
// that continues the greedy text byte for byte, stop strings applied across the switch.
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { originConfig } from "../../../src/compose";
import { parseEndpointLoad } from "../../../src/protocols/endpoint-load-metrics";
import type { Replica } from "../../../src/runtime";
import { appOnOrigin, call, originCounters, type App } from "../../support/workers/generation";
import { problem } from "../../support/workers/helpers";

const pool = inject("originPool");

const replicas = (...urls: [string, number][]): Replica[] =>
  urls.map(([url, weight]) => ({ url, weight }));

/** An app over `pool`, its first URL standing for the whole as `url`. */
const appOnPool = (members: Replica[], extra = {}) =>
  appOnOrigin(members[0]!.url, { replicas: members, ...extra });

interface Chunk {
  choices: {
    text?: string;
    delta?: { content?: string };
    finish_reason: string | null;
    logprobs?: { tokens?: string[] } | null;
  }[];
  error?: { code: string };
  usage?: { completion_tokens: number; prompt_tokens: number } | null;
}

/** Reads a streamed completion, calling `onText` after the first chunk with text. */
async function streamed(response: Response, onText?: () => Promise<void>) {
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const chunks: Chunk[] = [];
  let done = false;
  let called = false;
  while (!done) {
    const read = await reader.read();
    if (read.done) break;
    buffer += read.value;
    const frames = buffer.split("\n\n");
    buffer = frames.pop()!;
    for (const frame of frames) {
      if (!frame.startsWith("data: ")) continue;
      if (frame === "data: [DONE]") done = true;
      else chunks.push(JSON.parse(frame.slice(6)) as Chunk);
    }
    const texted = chunks.some((c) => c.choices?.[0]?.text || c.choices?.[0]?.delta?.content);
    if (!called && onText !== undefined && texted) {
      called = true;
      await onText();
    }
  }
  const text = chunks
    .map((chunk) => chunk.choices?.[0]?.text ?? chunk.choices?.[0]?.delta?.content ?? "")
    .join("");
  const finishes = chunks.flatMap((chunk) => chunk.choices?.map((c) => c.finish_reason) ?? []);
  const logprobs = chunks.reduce(
    (sum, chunk) => sum + (chunk.choices?.[0]?.logprobs?.tokens?.length ?? 0),
    0,
  );
  const errors = chunks.filter((chunk) => chunk.error !== undefined);
  const usages = chunks.filter((chunk) => chunk.usage);
  return {
    text,
    finishes: finishes.filter((reason) => reason !== null),
    usages,
    done,
    logprobs,
    errors,
  };
}

const long = (prompt: string) => ({
  model: "tiny-llm",
  prompt,
  max_tokens: 300,
  temperature: 0,
  ignore_eos: true,
  stream: true,
  stream_options: { include_usage: true },
});

const control = (action: string, url: string) =>
  fetch(`${pool!.control}/${action}?url=${encodeURIComponent(url)}`, { method: "POST" });

describe.skipIf(pool === null)("a model served by a pool of origins", () => {
  it("keeps each conversation on one replica, where its prefix is cached", async () => {
    const app = appOnPool(replicas(...pool!.urls.map((url): [string, number] => [url, 1])));
    const before = await Promise.all(pool!.urls.map(originCounters));
    const cached: number[] = [];
    for (let conversation = 0; conversation < 6; conversation += 1) {
      const messages = [
        { role: "user", content: `Conversation ${conversation}: tell me about the old house.` },
      ];
      for (let turn = 0; turn < 3; turn += 1) {
        const answer = await (
          await call(app, "/v1/chat/completions", {
            model: "tiny-llm",
            messages,
            max_tokens: 24,
            temperature: 0,
          })
        ).json<{
          choices: { message: { content: string } }[];
          usage: { prompt_tokens_details?: { cached_tokens: number } };
        }>();
        if (turn === 2) cached.push(answer.usage.prompt_tokens_details?.cached_tokens ?? 0);
        messages.push({ role: "assistant", content: answer.choices[0]!.message.content });
        messages.push({ role: "user", content: `And then, part ${turn + 2}?` });
      }
    }
    // Turn 3 of every conversation found turn 2's blocks on its replica.
    for (const tokens of cached) expect(tokens).toBeGreaterThanOrEqual(32);
    const after = await Promise.all(pool!.urls.map(originCounters));
    const served = after.map(
      (counters, i) => counters.generationTokens - before[i]!.generationTokens,
    );
    // The conversations were spread: more than one replica decoded.
    expect(served.filter((tokens) => tokens > 0).length).toBeGreaterThanOrEqual(2);
  });

  it("steps around a replica that cannot be reached, before the first token", async () => {
    const app = appOnPool(replicas(["http://127.0.0.1:9", 1000], [pool!.urls[0]!, 1]));
    for (let request = 0; request < 3; request += 1) {
      const response = await call(app, "/v1/completions", {
        model: "tiny-llm",
        prompt: "The old house",
        max_tokens: 8,
      });
      expect(response.status).toBe(200);
    }
  });

  it("sends no new request to a draining replica, and lets its running stream finish", async () => {
    const { url } = await (
      await fetch(`${pool!.control}/spawn?chunkDelayMs=5`, { method: "POST" })
    ).json<{ url: string }>();
    const app = appOnPool(replicas([url, 1000], [pool!.urls[1]!, 1]));
    let during: Response[] = [];
    const running = await streamed(
      await call(app, "/v1/completions", long("The old house stood")),
      async () => {
        await control("term", url);
        // Draining: its POSTs answer 503 with Retry-After; the pool sends these elsewhere.
        during = await Promise.all(
          [0, 1, 2].map(() =>
            call(app, "/v1/completions", { model: "tiny-llm", prompt: "The sea", max_tokens: 4 }),
          ),
        );
      },
    );
    expect(during.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(running.finishes).toEqual(["length"]);
    expect(running.done).toBe(true);
  });

  it("continues a stream whose replica is SIGKILLed, byte for byte as an uninterrupted run", async () => {
    const survivor = pool!.urls[2]!;
    const prompt = "The old house stood at the end of the road, and";
    const reference = await streamed(
      await call(appOnOrigin(survivor), "/v1/completions", long(prompt)),
    );
    expect(reference.finishes).toEqual(["length"]);
    const { url: victim } = await (await fetch(`${pool!.control}/spawn`, { method: "POST" })).json<{
      url: string;
    }>();
    const app = appOnPool(replicas([victim, 1000], [survivor, 1]));
    const before = await originCounters(survivor);
    const killed = await streamed(await call(app, "/v1/completions", long(prompt)), async () => {
      await control("kill", victim);
    });
    const continued = (await originCounters(survivor)).generationTokens - before.generationTokens;
    // The survivor decoded only what was left: the victim had sent some tokens before it died.
    expect(continued).toBeGreaterThan(0);
    expect(continued).toBeLessThan(300);
    expect(killed.text).toBe(reference.text);
    expect(killed.finishes).toEqual(["length"]);
    expect(killed.usages).toHaveLength(1);
    const { prompt_tokens, completion_tokens } = reference.usages[0]!.usage!;
    expect(killed.usages[0]!.usage).toMatchObject({ prompt_tokens, completion_tokens });
    expect(killed.done).toBe(true);
  });

  it("applies a stop string that only the continuing replica reaches, once", async () => {
    const survivor = pool!.urls[2]!;
    const prompt = "The river ran past the mill, and";
    const reference = await streamed(
      await call(appOnOrigin(survivor), "/v1/completions", long(prompt)),
    );
    // A stop string first met two thirds of the way in: after the kill below.
    let at = Math.floor((reference.text.length * 2) / 3);
    while (reference.text.indexOf(reference.text.slice(at, at + 6)) !== at) at += 1;
    const stop = reference.text.slice(at, at + 6);
    // 20 ms a token: the kill comes seconds before the victim could reach the stop string.
    const { url: victim } = await (
      await fetch(`${pool!.control}/spawn?chunkDelayMs=20`, { method: "POST" })
    ).json<{ url: string }>();
    const before = await originCounters(survivor);
    const stopped = await streamed(
      await call(appOnPool(replicas([victim, 1000], [survivor, 1])), "/v1/completions", {
        ...long(prompt),
        stop: [stop],
      }),
      async () => {
        await control("kill", victim);
      },
    );
    expect((await originCounters(survivor)).generationTokens).toBeGreaterThan(
      before.generationTokens,
    );
    expect(stopped.errors).toEqual([]);
    expect(stopped.text).toBe(reference.text.slice(0, at));
    expect(stopped.finishes).toEqual(["stop"]);
    expect(stopped.usages).toHaveLength(1);
    expect(stopped.done).toBe(true);
  });

  it("replaces a replica that stalls mid-stream, byte for byte as an uninterrupted run", async () => {
    const survivor = pool!.urls[1]!;
    const prompt = "In the morning the market opened and";
    const reference = await streamed(
      await call(appOnOrigin(survivor), "/v1/completions", long(prompt)),
    );
    const { url: victim } = await (
      await fetch(`${pool!.control}/spawn?chunkDelayMs=10`, { method: "POST" })
    ).json<{ url: string }>();
    try {
      // 1.5 s without a chunk is a stall: far above a busy machine's gap between two tokens.
      const app = appOnPool(replicas([victim, 1000], [survivor, 1]), { idleTimeoutMs: 1_500 });
      const stalled = await streamed(await call(app, "/v1/completions", long(prompt)), async () => {
        await control("pause", victim);
      });
      expect(stalled.errors).toEqual([]);
      expect(stalled.text).toBe(reference.text);
      expect(stalled.finishes).toEqual(["length"]);
      expect(stalled.usages).toHaveLength(1);
      expect(stalled.usages[0]!.usage!.completion_tokens).toBe(300);
      expect(stalled.done).toBe(true);
    } finally {
      await control("resume", victim);
      await control("kill", victim);
    }
  });

  it("carries seeded sampling, logprobs, and a structured output with a penalty across a kill", async () => {
    const spawn = async () =>
      (
        await (
          await fetch(`${pool!.control}/spawn?chunkDelayMs=10`, { method: "POST" })
        ).json<{ url: string }>()
      ).url;
    const [victim, structuredVictim] = await Promise.all([spawn(), spawn()]);
    const survivor = pool!.urls[1]!;
    // Seeded sampling goes on validly (not the tokens an uninterrupted run would draw: the
    // sampler's random stream restarts from the seed); logprobs keep coming, one per token.
    const sampled = await streamed(
      await call(appOnPool(replicas([victim, 1000], [survivor, 1])), "/v1/completions", {
        ...long("The sea was calm and"),
        max_tokens: 200,
        temperature: 0.8,
        seed: 5,
        logprobs: 1,
      }),
      async () => {
        await control("kill", victim);
      },
    );
    expect(sampled.errors).toEqual([]);
    expect(sampled.finishes).toEqual(["length"]);
    expect(sampled.usages[0]!.usage!.completion_tokens).toBe(200);
    expect(sampled.logprobs).toBe(200);
    expect(sampled.done).toBe(true);
    // A structured output goes on where the automaton was: the continuing replica reads the
    // output so far as output (output_prefix_tokens), so greedy JSON is the uninterrupted run's.
    const structuredBody = {
      model: "tiny-llm",
      messages: [{ role: "user", content: "Describe the house as JSON." }],
      response_format: { type: "json_object" },
      max_tokens: 200,
      temperature: 0,
      presence_penalty: 0.5,
      stream: true,
      stream_options: { include_usage: true },
    };
    const uninterrupted = await streamed(
      await call(appOnOrigin(survivor), "/v1/chat/completions", structuredBody),
    );
    const before = await originCounters(survivor);
    const structured = await streamed(
      await call(
        appOnPool(replicas([structuredVictim, 1000], [survivor, 1])),
        "/v1/chat/completions",
        structuredBody,
      ),
      async () => {
        await control("kill", structuredVictim);
      },
    );
    // The survivor took over mid-output: it decoded some, not all, of the answer's tokens.
    const continued = (await originCounters(survivor)).generationTokens - before.generationTokens;
    const total = uninterrupted.usages[0]!.usage!.completion_tokens;
    expect(continued).toBeGreaterThan(0);
    expect(continued).toBeLessThan(total);
    expect(structured.errors).toEqual([]);
    expect(structured.text).toBe(uninterrupted.text);
    expect(structured.finishes).toEqual(uninterrupted.finishes);
    expect(structured.done).toBe(true);
  });

  it("reads each replica's queue from ORCA's endpoint-load-metrics, sent when asked", async () => {
    const ask = (headers: Record<string, string>) =>
      fetch(`${pool!.urls[0]}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ model: "tiny-llm", prompt: [1, 333], max_tokens: 2, stream: true }),
      });
    // As vLLM: no report unless the request asks for one (the edge always asks).
    const unasked = await ask({});
    await unasked.text();
    expect(unasked.headers.get("endpoint-load-metrics")).toBeNull();
    const asked = await ask({ "endpoint-load-metrics-format": "TEXT" });
    const load = parseEndpointLoad(asked.headers.get("endpoint-load-metrics"));
    await asked.text();
    expect(load).toBeDefined();
    // The reference origin reports what runs as well as what waits.
    expect(load!.running).toBeGreaterThanOrEqual(0);
    expect(load!.waiting).toBeGreaterThanOrEqual(0);
  });

  it("names a configuration mistake in its 503", async () => {
    const config = originConfig(
      { ...env, ORIGIN_POOL: '[{"url": "http://a:8000"}, {"url": "gpu-2"}]' },
      "tiny-llm",
    );
    expect(config.configError).toBe("ORIGIN_POOL[1].url: must be an http(s) URL");
    const app: App = appOnOrigin("", config);
    const response = await call(app, "/v1/completions", {
      model: "tiny-llm",
      prompt: "The sea",
      max_tokens: 4,
    });
    expect(response.status).toBe(503);
    const body = await problem(response);
    expect(body.code).toBe("model_not_ready");
    expect(body.detail).toContain("ORIGIN_POOL[1].url: must be an http(s) URL");
  });
});
