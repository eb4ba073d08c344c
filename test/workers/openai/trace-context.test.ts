// W3C Trace Context toward the origin, inside workerd against the vLLM stub on loopback: the
// client's trace continues with a span id of the edge's own, its x-request-id goes along, and a
// request without a trace (or with a broken one) starts a new one.
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import type { StubRequest } from "../../support/vllm-stub-origin";
import { appOnOrigin } from "../../support/workers/generation";
import { KEY } from "../../support/workers/helpers";

const origin = inject("llmOrigin");
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";

async function chat(
  prefix: string,
  headers: Record<string, string>,
  before: string[] = [],
): Promise<StubRequest> {
  // `before`: replicas tried first (weight 1000), each refusing or failing.
  const app = appOnOrigin(`${origin!.faultyUrl}/${prefix}`, {
    replicas: [
      ...before.map((url) => ({ url, weight: 1000 })),
      { url: `${origin!.faultyUrl}/${prefix}`, weight: 1 },
    ],
  });
  const response = await app.request(
    "https://edge.test/v1/chat/completions",
    {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({
        model: "tiny-llm",
        messages: [{ role: "user", content: "The old house" }],
        max_tokens: 4,
      }),
    },
    env,
  );
  expect(response.status).toBe(200);
  await response.text();
  const all = await (await fetch(`${origin!.faultyUrl}/_stub/requests`)).json<StubRequest[]>();
  return all.filter((request) => request.prefix === prefix).at(-1)!;
}

describe.skipIf(origin === null)("trace context toward the origin", () => {
  it("continues the client's trace with a span of its own, and sends its x-request-id", async () => {
    const seen = await chat("trace-1", {
      traceparent: `00-${TRACE}-${PARENT}-01`,
      "x-request-id": "client-request-37",
    });
    expect(seen.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    expect(seen.traceparent).not.toContain(PARENT);
    expect(seen.requestId).toBe("client-request-37");
  });

  it("keeps the trace across a failover to another replica", async () => {
    const seen = await chat("trace-5", { traceparent: `00-${TRACE}-${PARENT}-01` }, [
      `${origin!.faultyUrl}/503`,
      "http://127.0.0.1:9",
    ]);
    expect(seen.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
  });

  it("starts a new trace without one or with a broken one, and names the request", async () => {
    for (const [prefix, headers] of [
      ["trace-2", {}],
      ["trace-3", { traceparent: `00-${"0".repeat(32)}-${PARENT}-01` }],
      ["trace-4", { traceparent: "not a traceparent" }],
    ] as const) {
      const seen = await chat(prefix, headers);
      expect(seen.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(seen.traceparent).not.toContain("0".repeat(32));
      expect(seen.requestId).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
