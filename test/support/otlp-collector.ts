// An OTLP/HTTP trace collector for tests: a loopback server taking POST /v1/traces in OTLP's JSON
// encoding (what @opentelemetry/exporter-trace-otlp-http sends) and keeping the spans, flattened.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One received span, its attributes as plain values. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind number (2: server). */
  kind: number;
  attributes: Record<string, unknown>;
  events: string[];
  resource: Record<string, unknown>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: KeyValue[];
        events?: { name: string }[];
      }[];
    }[];
  }[];
}

const plain = (value: AnyValue): unknown =>
  value.stringValue ??
  (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
  value.doubleValue ??
  value.boolValue ??
  value.arrayValue?.values?.map(plain);

const record = (attributes: KeyValue[] = []) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, plain(value)]));

/** Flattens one OTLP/JSON ExportTraceServiceRequest. */
export function decodeTraces(body: ExportRequest): CollectedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resourceSpans) =>
    (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? "",
        name: span.name,
        kind: span.kind,
        attributes: record(span.attributes),
        events: (span.events ?? []).map((event) => event.name),
        resource: record(resourceSpans.resource?.attributes),
      })),
    ),
  );
}

export interface Collector {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: CollectedSpan[];
  /** Resolves once `predicate` holds for the spans received (polled), or rejects after `ms`. */
  until(predicate: (spans: CollectedSpan[]) => boolean, ms?: number): Promise<CollectedSpan[]>;
  close(): Promise<void>;
}

/** Starts a collector on a free loopback port. */
export async function startCollector(): Promise<Collector> {
  const spans: CollectedSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.method !== "POST" || request.url !== "/v1/traces") {
        response.writeHead(404).end();
        return;
      }
      try {
        spans.push(...decodeTraces(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
      } catch {
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    async until(predicate, ms = 20_000) {
      const deadline = Date.now() + ms;
      while (!predicate(spans)) {
        if (Date.now() > deadline)
          throw new Error(`spans not received in ${ms} ms: ${JSON.stringify(spans)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return spans;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
