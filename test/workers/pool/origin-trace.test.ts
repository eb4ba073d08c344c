// The edge's trace continued by real reference origins, inside workerd: origins exporting
// OTLP/HTTP spans to a collector in the pool's global setup show one trace per request, each
// origin span a child of the span id the edge sent it (not the client's), across a failover too.
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import type { Replica } from "../../../src/runtime";
import type { CollectedSpan } from "../../support/otlp-collector";
import { appOnOrigin } from "../../support/workers/generation";
import { KEY } from "../../support/workers/helpers";

const pool = inject("originPool");
const PARENT = "00f067aa0ba902b7";

const spawnTraced = async (chunkDelayMs = 0) =>
  (
    await (
      await fetch(`${pool!.control}/spawn?otlp=1&chunkDelayMs=${chunkDelayMs}`, { method: "POST" })
    ).json<{ url: string }>()
  ).url;

/** A 32-hex trace id of this test's own. */
const newTrace = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) =>
    byte.toString(16).padStart(2, "0"),
  ).join("");

/** The spans of `trace`, once `enough` of them have been exported. */
async function spansOf(trace: string, enough: number): Promise<CollectedSpan[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const all = await (await fetch(`${pool!.control}/spans`)).json<CollectedSpan[]>();
    const spans = all.filter((span) => span.traceId === trace);
    if (spans.length >= enough || Date.now() > deadline) return spans;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function chat(replicas: Replica[], traceparent: string): Promise<Response> {
  const app = appOnOrigin(replicas[0]!.url, { replicas });
  return await app.request(
    "https://edge.test/v1/chat/completions",
    {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", traceparent },
      body: JSON.stringify({
        model: "tiny-llm",
        messages: [{ role: "user", content: "The sea" }],
        max_tokens: 4,
        // Exactly 4 tokens: sampled, the model may end its answer sooner.
        ignore_eos: true,
        stream: true,
      }),
    },
    env,
  );
}

const portOf = (url: string) => Number(new URL(url).port);

describe.skipIf(pool === null)("the edge's trace continued by the origins", () => {
  it("gives one request one trace, the origin's span a child of the edge's span", async () => {
    const url = await spawnTraced();
    const trace = newTrace();
    const response = await chat([{ url, weight: 1 }], `00-${trace}-${PARENT}-01`);
    expect(response.status).toBe(200);
    await response.text();
    const spans = await spansOf(trace, 1);
    expect(spans).toHaveLength(1);
    const [span] = spans as [CollectedSpan];
    // The edge's own span id (trace-context.test.ts: never the client's) is the parent.
    expect(span.parentSpanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span.parentSpanId).not.toBe(PARENT);
    expect(span.name).toBe("text_completion tiny-llm");
    expect(span.attributes).toMatchObject({
      "gen_ai.operation.name": "text_completion",
      "gen_ai.request.model": "tiny-llm",
      "gen_ai.usage.output_tokens": 4,
      "server.port": portOf(url),
    });
    expect(span.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    expect(span.events).toContain("gen_ai.first_token");
  });

  it("keeps the trace across a failover: a span on each replica, each a child of its own call", async () => {
    const [draining, survivor] = await Promise.all([spawnTraced(10), spawnTraced()]);
    // A stream running on `draining` (straight to it, not through the edge) keeps it alive
    // while it drains after SIGTERM: its new POSTs answer 503, which the edge fails over.
    const running = await fetch(`${draining}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "tiny-llm", prompt: [1, 2, 3], max_tokens: 300, stream: true }),
    });
    const reader = running.body!.getReader();
    await reader.read();
    await fetch(`${pool!.control}/term?url=${encodeURIComponent(draining)}`, { method: "POST" });
    while ((await fetch(`${draining}/v2/health/ready`)).status !== 503)
      await new Promise((resolve) => setTimeout(resolve, 20));

    const trace = newTrace();
    // No load and (a short prompt) no prefix to be affine to: the first listed is tried first.
    const response = await chat(
      [
        { url: draining, weight: 1000 },
        { url: survivor, weight: 1 },
      ],
      `00-${trace}-${PARENT}-01`,
    );
    expect(response.status).toBe(200);
    await response.text();
    await reader.cancel();

    const spans = await spansOf(trace, 2);
    expect(spans).toHaveLength(2);
    const refused = spans.find((span) => span.attributes["server.port"] === portOf(draining));
    const served = spans.find((span) => span.attributes["server.port"] === portOf(survivor));
    expect(refused?.attributes["http.response.status_code"]).toBe(503);
    expect(served?.attributes["http.response.status_code"]).toBe(200);
    expect(served?.name).toBe("text_completion tiny-llm");
    // Each call had a span id of the edge's own: two parents, neither the client's.
    const parents = spans.map((span) => span.parentSpanId);
    for (const parent of parents) expect(parent).toMatch(/^[0-9a-f]{16}$/);
    expect(parents).not.toContain(PARENT);
    expect(new Set(parents).size).toBe(2);
  });
});
