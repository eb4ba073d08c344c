// A model served in two versions by real reference origins on loopback, inside workerd: the
// split by weight over conversations, each conversation kept on its version, the version named
// in the response, and the canary rolled back (all traffic to the stable version, said in
// /metrics and a log line) when it fails or grows slow.
import { env } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { originConfig } from "../../../src/compose";
import type { CanaryConfig } from "../../../src/runtime/origin/canary-config";
import type { Replica } from "../../../src/runtime";
import { appOnOrigin, call, originCounters, type App } from "../../support/workers/generation";
import { KEY, problem } from "../../support/workers/helpers";

const pool = inject("originPool");

const spawn = async (chunkDelayMs = 0) =>
  (
    await (
      await fetch(`${pool!.control}/spawn?chunkDelayMs=${chunkDelayMs}`, { method: "POST" })
    ).json<{ url: string }>()
  ).url;

const kill = (url: string) =>
  fetch(`${pool!.control}/kill?url=${encodeURIComponent(url)}`, { method: "POST" });

const canaryApp = (replicas: Replica[], canary: Partial<CanaryConfig>) =>
  appOnOrigin(replicas[0]!.url, {
    replicas,
    canary: {
      stable: "v1",
      canary: "v2",
      weight: 50,
      maxErrorRate: 0.5,
      maxLatencyMs: 10_000,
      sticky: "conversation",
      windowSeconds: 60,
      minRequests: 3,
      ...canary,
    },
  });

async function chat(app: App, messages: { role: string; content: string }[]) {
  const response = await call(app, "/v1/chat/completions", {
    model: "tiny-llm",
    messages,
    max_tokens: 4,
    temperature: 0,
    ignore_eos: true,
  });
  expect(response.status).toBe(200);
  const body = await response.json<{
    choices: { message: { content: string } }[];
    model_version?: string;
    usage: { completion_tokens: number };
  }>();
  return { header: response.headers.get("x-model-version"), body };
}

async function metrics(app: App): Promise<string> {
  const response = await app.request(
    "https://edge.test/metrics",
    { headers: { authorization: `Bearer ${KEY}` } },
    env,
  );
  expect(response.status).toBe(200);
  return await response.text();
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe.skipIf(pool === null)("a model served in two versions", () => {
  let stable: string;
  let canary: string;
  beforeAll(async () => {
    // Origins of their own, so that their counters see this file's requests alone.
    [stable, canary] = await Promise.all([spawn(), spawn()]);
  });

  it("splits conversations by weight, keeps each on its version, and names it", async () => {
    const app = canaryApp(
      [
        { url: stable, weight: 1, version: "v1" },
        { url: canary, weight: 1, version: "v2" },
      ],
      { weight: 50 },
    );
    const before = await Promise.all([stable, canary].map(originCounters));
    const served: Record<string, number> = { v1: 0, v2: 0 };
    for (let conversation = 0; conversation < 12; conversation += 1) {
      const messages = [{ role: "user", content: `Conversation ${conversation}: the old house.` }];
      const versions: (string | null)[] = [];
      for (let turn = 0; turn < 3; turn += 1) {
        const { header, body } = await chat(app, messages);
        expect(body.model_version).toBe(header);
        expect(body.usage.completion_tokens).toBe(4);
        versions.push(header);
        served[header!] = (served[header!] ?? 0) + 1;
        messages.push({ role: "assistant", content: body.choices[0]!.message.content });
        messages.push({ role: "user", content: `And then, part ${turn + 2}?` });
      }
      // Sticky: every turn of a conversation on one version.
      expect(new Set(versions).size).toBe(1);
      expect(["v1", "v2"]).toContain(versions[0]);
    }
    // Each version's requests were decoded by its own replica, and only there.
    const after = await Promise.all([stable, canary].map(originCounters));
    expect(after[0]!.generationTokens - before[0]!.generationTokens).toBe(4 * served.v1!);
    expect(after[1]!.generationTokens - before[1]!.generationTokens).toBe(4 * served.v2!);
    // Streamed too, the header names the version; sticky by key, every conversation on one.
    const streamed = await call(app, "/v1/chat/completions", {
      model: "tiny-llm",
      messages: [{ role: "user", content: "Conversation 0: the old house." }],
      max_tokens: 2,
      stream: true,
    });
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    expect(["v1", "v2"]).toContain(streamed.headers.get("x-model-version"));
    await streamed.text();
    // Workers AI's shape, streamed, too.
    const run = await call(app, "/v1/run/tiny-llm", {
      prompt: "Conversation 0: the old house.",
      max_tokens: 2,
      stream: true,
    });
    expect(run.status).toBe(200);
    expect(["v1", "v2"]).toContain(run.headers.get("x-model-version"));
    await run.text();
    // The Responses API names it too, streamed or not.
    for (const stream of [false, true]) {
      const response = await call(app, "/v1/responses", {
        model: "tiny-llm",
        input: "Conversation 0: the old house.",
        max_output_tokens: 2,
        stream,
      });
      expect(response.status).toBe(200);
      expect(["v1", "v2"]).toContain(response.headers.get("x-model-version"));
      await response.text();
    }
    const byKey = canaryApp(
      [
        { url: stable, weight: 1, version: "v1" },
        { url: canary, weight: 1, version: "v2" },
      ],
      { weight: 50, sticky: "key" },
    );
    const keyed = new Set<string | null>();
    for (let conversation = 0; conversation < 6; conversation += 1)
      keyed.add((await chat(byKey, [{ role: "user", content: `Keyed ${conversation}.` }])).header);
    expect(keyed.size).toBe(1);
    // Labels alone split nothing and name nothing: no canary configured, no header.
    const labelled = appOnOrigin(stable, {
      replicas: [
        { url: stable, weight: 1, version: "v1" },
        { url: canary, weight: 1, version: "v2" },
      ],
    });
    const plain = await chat(labelled, [{ role: "user", content: "No canary." }]);
    expect(plain.header).toBeNull();
    expect(plain.body.model_version).toBeUndefined();
    // Both versions served (12 conversations at 50%: all on one side has odds of 1 in 2,048,
    // and the hash is deterministic: this split is the same on every run).
    expect(served.v1).toBeGreaterThan(0);
    expect(served.v2).toBeGreaterThan(0);
  });

  it("rolls a failing canary back: its clients fail over unseen, then it gets nothing", async () => {
    const doomed = await spawn();
    const config = { weight: 100, minRequests: 3, maxErrorRate: 0.5 };
    const app = canaryApp(
      [
        { url: stable, weight: 1, version: "v1" },
        { url: doomed, weight: 1, version: "v2" },
      ],
      config,
    );
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect((await chat(app, [{ role: "user", content: "Before the fault." }])).header).toBe("v2");
    await kill(doomed);
    const versions: (string | null)[] = [];
    for (let request = 0; request < 6; request += 1)
      versions.push((await chat(app, [{ role: "user", content: `After, ${request}.` }])).header);
    // Every request answered 200 from the stable version: the canary's refusals were failed over.
    expect(versions).toEqual(["v1", "v1", "v1", "v1", "v1", "v1"]);
    const text = await metrics(app);
    expect(text).toContain(
      'edge_canary_rolled_back{model="tiny-llm",stable="v1",canary="v2",scope="isolate"} 1',
    );
    // One success before the kill, then 2 failures (2 of 3 > 0.5) decided; none after.
    expect(text).toContain(
      'edge_model_version_attempts_total{model="tiny-llm",version="v2",outcome="error"} 2',
    );
    expect(text).toContain(
      'edge_model_version_attempts_total{model="tiny-llm",version="v1",outcome="ok"} 6',
    );
    const lines = logged.mock.calls
      .map(([line]) => String(line))
      .filter((line) => line.includes("canary_rolled_back"))
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      expect.objectContaining({
        event: "canary_rolled_back",
        model: "tiny-llm",
        reason: "error_rate",
        samples: 3,
        errorRate: 0.6667,
      }),
    ]);
  });

  it("counts a canary that dies mid-stream against it; the stream goes on elsewhere", async () => {
    const dying = await spawn(20);
    const app = canaryApp(
      [
        { url: stable, weight: 1, version: "v1" },
        { url: dying, weight: 1, version: "v2" },
      ],
      { weight: 100, minRequests: 1, maxErrorRate: 0.5 },
    );
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const response = await call(app, "/v1/completions", {
      model: "tiny-llm",
      prompt: "The old house stood at the end of the road, and",
      max_tokens: 200,
      temperature: 0,
      ignore_eos: true,
      stream: true,
    });
    expect(response.headers.get("x-model-version")).toBe("v2");
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    let killed = false;
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      text += read.value;
      if (!killed && text.includes('"text":"')) {
        killed = true;
        await kill(dying);
      }
    }
    expect(killed).toBe(true);
    expect(text).toContain('"finish_reason":"length"');
    expect(text).toContain("data: [DONE]");
    expect(text).not.toContain('"error"');
    const metricsText = await metrics(app);
    expect(metricsText).toContain(
      'edge_model_version_attempts_total{model="tiny-llm",version="v2",outcome="error"} 1',
    );
    expect(metricsText).toContain(
      'edge_canary_rolled_back{model="tiny-llm",stable="v1",canary="v2",scope="isolate"} 1',
    );
  });

  it("rolls a slow canary back on its p95 time to first token", async () => {
    const slow = await spawn(400);
    const app = canaryApp(
      [
        { url: stable, weight: 1, version: "v1" },
        { url: slow, weight: 1, version: "v2" },
      ],
      { weight: 100, minRequests: 2, maxLatencyMs: 200 },
    );
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    // Both served (slowly) by the canary; the second fills the window and decides.
    for (let request = 0; request < 2; request += 1)
      expect((await chat(app, [{ role: "user", content: `Slow ${request}.` }])).header).toBe("v2");
    expect((await chat(app, [{ role: "user", content: "After." }])).header).toBe("v1");
    const line = logged.mock.calls
      .map(([each]) => String(each))
      .find((each) => each.includes("canary_rolled_back"));
    expect(JSON.parse(line!)).toMatchObject({ reason: "latency", samples: 2, maxLatencyMs: 200 });
    expect(JSON.parse(line!).p95Ms).toBeGreaterThanOrEqual(400);
  });

  it("rolls forward when the configuration changes (the operator's retry)", async () => {
    const replicas: Replica[] = [
      { url: stable, weight: 1, version: "v1" },
      { url: canary, weight: 1, version: "v2" },
    ];
    // The latency rollback above holds for that configuration; a new one starts afresh.
    const app = canaryApp(replicas, { weight: 100, minRequests: 2, maxLatencyMs: 201 });
    expect((await chat(app, [{ role: "user", content: "Again." }])).header).toBe("v2");
    const text = await metrics(app);
    expect(text).toContain('edge_canary_rolled_back{model="tiny-llm",stable="v1",canary="v2"} 0');
  });

  it("reads ORIGIN_CANARY_<MODEL> from the environment, and names its mistake in the 503", async () => {
    const pool = JSON.stringify([
      { url: stable, version: "v1" },
      { url: canary, version: "v2" },
    ]);
    // A per-model variable is not in Env's type: it is read by name.
    const perModel = { ORIGIN_CANARY_TINY_LLM: '{"stable": "v1", "canary": "v2", "weight": 10}' };
    const good = originConfig(Object.assign({ ...env, ORIGIN_POOL: pool }, perModel), "tiny-llm");
    expect(good.configError).toBeUndefined();
    expect(good.canary).toMatchObject({ stable: "v1", canary: "v2", weight: 10 });
    const bad = originConfig(
      {
        ...env,
        ORIGIN_POOL: pool,
        ORIGIN_CANARY: '{"stable": "v1", "canary": "v3", "weight": 10}',
      },
      "tiny-llm",
    );
    expect(bad.configError).toBe('ORIGIN_CANARY.canary: no replica of the pool has version "v3"');
    const response = await call(appOnOrigin("", bad), "/v1/completions", {
      model: "tiny-llm",
      prompt: "The sea",
      max_tokens: 4,
    });
    expect(response.status).toBe(503);
    expect((await problem(response)).detail).toContain("ORIGIN_CANARY.canary: no replica");
  });
});
