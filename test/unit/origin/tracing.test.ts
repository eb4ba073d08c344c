// The reference origin's OpenTelemetry spans, as a real process exporting over OTLP/HTTP to a
// collector in this test: each request's span continues its W3C traceparent and carries the GenAI
// attributes, a trace the caller did not sample is not exported, what is buffered goes out on
// SIGTERM, and tracing is off by default.
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tracingEnabled } from "../../../origin/tracing";
import { startOrigin } from "../../../scripts/lib/origin.mjs";
import { type Collector, type CollectedSpan, startCollector } from "../../support/otlp-collector";

type OriginProcess = Awaited<ReturnType<typeof startOrigin>>;

const STARTUP_MS = 150_000;
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";

describe("tracing switch", () => {
  it("is on only with an OTLP endpoint, and off when the SDK or the exporter is disabled", () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c/v1/traces" })).toBe(true);
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };
    expect(tracingEnabled({ ...on, OTEL_SDK_DISABLED: "true" })).toBe(false);
    expect(tracingEnabled({ ...on, OTEL_TRACES_EXPORTER: "none" })).toBe(false);
  });
});

describe.skipIf(!existsSync("models/tiny-llm/manifest.json"))("origin spans over OTLP", () => {
  let collector: Collector;
  let origin: OriginProcess;

  beforeAll(async () => {
    collector = await startCollector();
    origin = await startOrigin({
      ORIGIN_GENERATION_GRAPH: "decoder-fp32",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: "50",
    });
  }, STARTUP_MS);
  afterAll(async () => {
    await origin?.stop();
    await collector?.close();
  });

  const complete = async (headers: Record<string, string>, stream: boolean) => {
    const response = await fetch(`${origin.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ model: "tiny-llm", prompt: [1, 2, 3, 4], max_tokens: 5, stream }),
    });
    expect(response.status).toBe(200);
    await response.text();
  };
  const byTrace = (trace: string) => (spans: CollectedSpan[]) =>
    spans.filter((span) => span.traceId === trace);

  it("continues the caller's trace with a server span carrying the GenAI attributes", async () => {
    await complete({ traceparent: `00-${TRACE}-${PARENT}-01` }, true);
    const spans = byTrace(TRACE)(await collector.until((all) => byTrace(TRACE)(all).length > 0));
    expect(spans).toHaveLength(1);
    const [span] = spans as [CollectedSpan];
    expect(span.parentSpanId).toBe(PARENT);
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span.kind).toBe(2);
    expect(span.name).toBe("text_completion tiny-llm");
    const port = Number(new URL(origin.url).port);
    expect(span.attributes).toMatchObject({
      "gen_ai.operation.name": "text_completion",
      "gen_ai.request.model": "tiny-llm",
      "gen_ai.request.max_tokens": 5,
      "gen_ai.usage.input_tokens": 4,
      "gen_ai.usage.output_tokens": 5,
      "gen_ai.response.finish_reasons": ["length"],
      "http.request.method": "POST",
      "http.route": "/v1/completions",
      "http.response.status_code": 200,
      "server.address": "127.0.0.1",
      "server.port": port,
    });
    expect(span.attributes["gen_ai.server.time_to_first_token"]).toBeGreaterThan(0);
    expect(span.events).toContain("gen_ai.first_token");
    expect(span.resource["service.name"]).toBe("edge-inference-origin");
  });

  it("starts a trace without a traceparent; exports none the caller did not sample", async () => {
    const unsampled = "5bf92f3577b34da6a3ce929d0e0e4737";
    await complete({ traceparent: `00-${unsampled}-${PARENT}-00` }, false);
    const before = new Set(collector.spans.map((span) => span.traceId));
    await complete({}, false);
    const spans = await collector.until((all) =>
      all.some((span) => !before.has(span.traceId) && span.name === "text_completion tiny-llm"),
    );
    const root = spans.find((span) => !before.has(span.traceId))!;
    expect(root.parentSpanId).toBe("");
    expect(root.attributes["gen_ai.usage.output_tokens"]).toBe(5);
    // Spans go out in order of their end: the unsampled request ended before the new root.
    expect(spans.some((span) => span.traceId === unsampled)).toBe(false);
  });

  it(
    "exports the spans still buffered when it is stopped (SIGTERM)",
    async () => {
      const late = await startOrigin({
        ORIGIN_GENERATION_GRAPH: "decoder-fp32",
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        // No batch would go out during the test on its own.
        OTEL_BSP_SCHEDULE_DELAY: "600000",
      });
      const trace = "6bf92f3577b34da6a3ce929d0e0e4738";
      const response = await fetch(`${late.url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", traceparent: `00-${trace}-${PARENT}-01` },
        body: JSON.stringify({ model: "tiny-llm", prompt: [1, 2, 3], max_tokens: 2 }),
      });
      expect(response.status).toBe(200);
      await response.text();
      expect(collector.spans.some((span) => span.traceId === trace)).toBe(false);
      await late.stop();
      await collector.until((all) => all.some((span) => span.traceId === trace));
    },
    STARTUP_MS,
  );
});
