// OpenTelemetry tracing for the origin: when an OTLP endpoint is configured (the standard
// OTEL_EXPORTER_OTLP_* variables), each POST gets a server span continuing its W3C traceparent.
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_PATH,
} from "@opentelemetry/semantic-conventions";
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";

/** The origin's version (package.json), as its service.version. */
const ORIGIN_VERSION = "0.2.0";

/** GenAI semantic-convention attributes (incubating in @opentelemetry/semantic-conventions). */
export const GEN_AI = {
  operation: "gen_ai.operation.name",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  responseId: "gen_ai.response.id",
  maxTokens: "gen_ai.request.max_tokens",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  /** Seconds from the request to its first token (the name of vLLM's and semconv's metric). */
  timeToFirstToken: "gen_ai.server.time_to_first_token",
} as const;

/** The span event recorded when the first token is out. */
export const FIRST_TOKEN_EVENT = "gen_ai.first_token";

const spans = new WeakMap<Request, Span>();
/** Spans a route has named after its GenAI operation. */
const named = new WeakSet<Span>();

/** The request's server span, when tracing is on (undefined otherwise: nothing to record). */
export const spanOf = (request: Request): Span | undefined => spans.get(request);

/** Names `span` after a GenAI operation on `model` ("{operation} {model}", as semconv asks). */
export function startGeneration(
  span: Span,
  attributes: Attributes & { operation: string; model: string },
): void {
  const { operation, model, ...rest } = attributes;
  span.updateName(`${operation} ${model}`);
  named.add(span);
  span.setAttributes({ [GEN_AI.operation]: operation, [GEN_AI.requestModel]: model, ...rest });
}

/** Records a generation's outcome on `span`: token counts, finish reason, response id. */
export function recordGeneration(
  span: Span,
  fields: {
    inputTokens: number;
    outputTokens: number;
    finishReason: string | null | undefined;
    responseId: string;
  },
): void {
  span.setAttributes({
    [GEN_AI.inputTokens]: fields.inputTokens,
    [GEN_AI.outputTokens]: fields.outputTokens,
    [GEN_AI.responseId]: fields.responseId,
    ...(fields.finishReason ? { [GEN_AI.finishReasons]: [fields.finishReason] } : {}),
  });
}

/** Marks the first token on `span`: an event, and the time to it in seconds. */
export function recordFirstToken(span: Span, startedAt: number): void {
  span.addEvent(FIRST_TOKEN_EVENT);
  span.setAttribute(GEN_AI.timeToFirstToken, (performance.now() - startedAt) / 1000);
}

export interface Tracing {
  /** Hono middleware: a server span per POST, ended when its response has been sent. */
  middleware: MiddlewareHandler;
  /** Exports what is buffered and stops (on drain). */
  shutdown(): Promise<void>;
}

/** Whether the environment turns tracing on: an OTLP endpoint set, and the SDK not disabled. */
export function tracingEnabled(env: Record<string, string | undefined>): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

const getter: TextMapGetter<Request> = {
  keys: (request) => [...request.headers.keys()],
  get: (request, key) => request.headers.get(key) ?? undefined,
};

/** What @hono/node-server passes as the env of each request. */
type NodeBindings = { incoming?: IncomingMessage; outgoing?: ServerResponse };

/**
 * Tracing over OTLP/HTTP (JSON) as the environment configures it, or undefined when it is off.
 * The exporter reads the OTEL_EXPORTER_OTLP_* variables itself (endpoint, headers, timeout).
 */
export function createTracing(env: NodeJS.ProcessEnv): Tracing | undefined {
  if (!tracingEnabled(env)) return undefined;
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME || "edge-inference-origin",
      [ATTR_SERVICE_VERSION]: ORIGIN_VERSION,
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter(),
        ...(Number.isFinite(delay) && delay > 0 ? { scheduledDelayMillis: delay } : {}),
      }),
    ],
  });
  const tracer = provider.getTracer("edge-inference-origin", ORIGIN_VERSION);
  return { middleware: tracingMiddleware(tracer), shutdown: () => provider.shutdown() };
}

/** A server span per POST, child of its traceparent (W3C), ended once the response is sent. */
export function tracingMiddleware(tracer: Tracer): MiddlewareHandler<{ Bindings: NodeBindings }> {
  const propagator = new W3CTraceContextPropagator();
  return async (c, next) => {
    // Model work is POST; health checks, metadata and /metrics scrapes would only be noise.
    if (c.req.method !== "POST") return await next();
    const request = c.req.raw;
    const parent: Context = propagator.extract(ROOT_CONTEXT, request, getter);
    const socket = c.env?.incoming?.socket;
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: request.method,
      [ATTR_URL_PATH]: c.req.path,
    };
    // The replica: the address and port this request came in on.
    if (socket?.localAddress !== undefined) attributes[ATTR_SERVER_ADDRESS] = socket.localAddress;
    if (socket?.localPort !== undefined) attributes[ATTR_SERVER_PORT] = socket.localPort;
    const span = tracer.startSpan(request.method, { kind: SpanKind.SERVER, attributes }, parent);
    spans.set(request, span);
    try {
      await next();
    } finally {
      const route = routePath(c);
      const status = c.res.status;
      if (!named.has(span)) span.updateName(`${request.method} ${route}`);
      span.setAttributes({ [ATTR_HTTP_ROUTE]: route, [ATTR_HTTP_RESPONSE_STATUS_CODE]: status });
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      const outgoing = c.env?.outgoing;
      // A streamed body is still being written: the span ends with the response.
      if (outgoing !== undefined && !outgoing.writableFinished)
        outgoing.once("close", () => span.end());
      else span.end();
    }
  };
}
