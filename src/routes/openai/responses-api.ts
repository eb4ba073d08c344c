// OpenAI's Responses API, text only: POST /v1/responses over the chat generation (the same
// template, sampler and stop handling as /v1/chat/completions), answered as the openai SDK's
// `client.responses.create` and `.stream` read it (openai-node src/resources/responses/
// responses.ts: Response, ResponseStreamEvent) and as vLLM serves it
// (vllm/entrypoints/openai/serving_responses.py): one assistant message with one output_text
// part; `status` "incomplete" with `incomplete_details.reason` "max_output_tokens" when the
// length ran out. Streamed, OpenAI's typed events, each named by its type and numbered:
// response.created, response.in_progress, response.output_item.added,
// response.content_part.added, response.output_text.delta per delta, then the .done events
// and response.completed (or response.incomplete); `data: [DONE]` last, as every stream here.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { capability } from "../../tasks";
import type { TextEvent, TokenLogprobs, Usage } from "../../tasks/text-generation/text-generation";
import { sseResponse } from "../event-stream";
import { BODY_ERRORS, MODEL_ERRORS, problemResponses } from "../problems";
import { findModel, requireReady, type AppEnv } from "../services";
import { validationHook } from "../validation";
import { collect, startGeneration } from "./generation-stream";
import { ResponsesRequest, responsesChat, responsesLogprobs } from "./responses-request";
import { chatLogprobs } from "./responses";
import { generationOptions } from "./sampling";
import { responseFormatOf, structuredOutputsOf, TextFormat } from "./structured-fields";

const TopLogprob = z.object({ token: z.string(), logprob: z.number(), bytes: z.array(z.number().int()).nullable() });
const OutputText = z.object({
  type: z.literal("output_text"),
  text: z.string(),
  annotations: z.array(z.unknown()).max(0),
  logprobs: z.array(TopLogprob.extend({ top_logprobs: z.array(TopLogprob) })).openapi({ description: "With include message.output_text.logprobs, one entry per output token; [] otherwise" }),
});
const OutputMessage = z.object({
  type: z.literal("message"),
  id: z.string(),
  status: z.enum(["in_progress", "completed", "incomplete"]),
  role: z.literal("assistant"),
  content: z.array(OutputText),
});

export const ResponseObject = z
  .object({
    id: z.string(),
    object: z.literal("response"),
    created_at: z.number().int(),
    completed_at: z.number().int().nullable(),
    status: z.enum(["in_progress", "completed", "incomplete"]),
    error: z.null(),
    incomplete_details: z.object({ reason: z.literal("max_output_tokens") }).nullable(),
    instructions: z.string().nullable(),
    max_output_tokens: z.number().int().nullable(),
    model: z.string(),
    output: z.array(OutputMessage),
    parallel_tool_calls: z.boolean(),
    temperature: z.number(),
    top_p: z.number(),
    tool_choice: z.enum(["none", "auto"]),
    tools: z.array(z.unknown()).max(0),
    text: z.object({ format: TextFormat.unwrap().unwrap(), verbosity: z.literal("medium") }),
    truncation: z.literal("disabled"),
    store: z.literal(false),
    metadata: z.record(z.string(), z.string()),
    user: z.string().nullable(),
    usage: z
      .object({
        input_tokens: z.number().int(),
        input_tokens_details: z.object({ cached_tokens: z.number().int() }),
        output_tokens: z.number().int(),
        output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
        total_tokens: z.number().int(),
      })
      .nullable(),
  })
  .openapi("Response", { description: "OpenAI's Response object: one assistant message, its text as one output_text part" });
type ResponseObject = z.infer<typeof ResponseObject>;

type Done = Extract<TextEvent, { type: "done" }>;

const hex = () => crypto.randomUUID().replaceAll("-", "");

/** The Response at a point of its life: in progress (nothing out yet), or ended with its text and usage. */
function responseAt(base: Omit<ResponseObject, "status" | "completed_at" | "incomplete_details" | "output" | "usage">, itemId: string, end?: { text: string; done: Done; logprobs?: readonly TokenLogprobs[] | undefined }): ResponseObject {
  if (end === undefined) return { ...base, status: "in_progress", completed_at: null, incomplete_details: null, output: [], usage: null };
  const incomplete = end.done.finishReason === "length";
  const status = incomplete ? "incomplete" : "completed";
  return {
    ...base,
    status,
    completed_at: Math.floor(Date.now() / 1000),
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    output: [{ type: "message", id: itemId, status, role: "assistant", content: [{ type: "output_text", text: end.text, annotations: [], logprobs: entries(end.logprobs) }] }],
    usage: usageOf(end.done.usage),
  };
}

/** Output tokens' logprobs as OpenAI's Responses API lists them (the chat shape: token, logprob, bytes, top_logprobs). */
const entries = (logprobs: readonly TokenLogprobs[] | undefined) => (logprobs === undefined ? [] : (chatLogprobs(logprobs)?.content ?? []));

function usageOf(usage: Usage): NonNullable<ResponseObject["usage"]> {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
  };
}

/** OpenAI's stream events carry their type as the SSE event name too, and a sequence number. */
function eventWriter() {
  let sequence = 0;
  return (type: string, fields: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
}

const route = createRoute({
  method: "post",
  path: "/v1/responses",
  operationId: "createResponse",
  summary: "OpenAI Responses API, text in and out (streamed with stream: true)",
  request: { body: { required: true, content: { "application/json": { schema: ResponsesRequest } } } },
  responses: {
    200: {
      description: "The Response, or its typed SSE events",
      content: {
        "application/json": { schema: ResponseObject },
        "text/event-stream": { schema: z.string().openapi({ description: "`event: <type>` / `data: {event}` pairs (response.created … response.completed), then `data: [DONE]`" }) },
      },
    },
    ...problemResponses("/v1/responses", 401, 429, BODY_ERRORS, MODEL_ERRORS),
  },
});

export const responsesRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook }).openapi(route, async (c) => {
  const body = c.req.valid("json");
  const model = findModel(c.get("services"), body.model, "model");
  const generator = capability(model, "textGeneration", "model");
  await requireReady(model);
  const maxTokens = body.max_output_tokens ?? undefined;
  const prompt = await generator.prepare({ messages: responsesChat(body), addGenerationPrompt: true }, maxTokens);
  const logprobs = responsesLogprobs(body);
  const format = body.text?.format ?? { type: "text" as const };
  const structured = structuredOutputsOf({ response_format: responseFormatOf(format) }, { format: "text.format", schema: "text.format.schema" });
  const options = {
    ...generationOptions({ temperature: body.temperature, top_p: body.top_p }, maxTokens),
    ...(logprobs === undefined ? {} : { logprobs }),
    ...(structured === undefined ? {} : { structured }),
  };
  const started = await startGeneration(generator, prompt, options, c.req.raw.signal);
  const base = {
    id: `resp_${hex()}`,
    object: "response" as const,
    created_at: Math.floor(Date.now() / 1000),
    error: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: model.manifest.name,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    temperature: body.temperature ?? 1,
    top_p: body.top_p ?? 1,
    tool_choice: body.tool_choice ?? "auto",
    tools: [],
    text: { format, verbosity: "medium" as const },
    truncation: "disabled" as const,
    store: false as const,
    metadata: body.metadata ?? {},
    user: body.user ?? null,
  };
  const itemId = `msg_${hex()}`;
  if (!body.stream) {
    const { text, done, logprobs: tokens } = await collect(started);
    return c.json(responseAt(base, itemId, { text, done, logprobs: tokens }), 200);
  }
  const write = eventWriter();
  const at = { item_id: itemId, output_index: 0, content_index: 0 };
  let text = "";
  /** Every token's logprobs so far, and those not yet sent (a delta's text may be held back). */
  const all: TokenLogprobs[] = [];
  const pending: TokenLogprobs[] = [];
  const take = () => entries(pending.splice(0));
  return sseResponse(started, {
    opening: () =>
      write("response.created", { response: responseAt(base, itemId) }) +
      write("response.in_progress", { response: responseAt(base, itemId) }) +
      write("response.output_item.added", { output_index: 0, item: { type: "message", id: itemId, status: "in_progress", role: "assistant", content: [] } }) +
      write("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [], logprobs: [] } }),
    event: (event) => {
      if (event.type === "text") {
        if (event.logprobs !== undefined) {
          all.push(...event.logprobs);
          pending.push(...event.logprobs);
        }
        if (event.text === "") return "";
        text += event.text;
        return write("response.output_text.delta", { ...at, delta: event.text, logprobs: take() });
      }
      if (event.type !== "done") return "";
      const ended = responseAt(base, itemId, { text, done: event, ...(logprobs === undefined ? {} : { logprobs: all }) });
      return (
        write("response.output_text.done", { ...at, text, logprobs: take() }) +
        write("response.content_part.done", { ...at, part: ended.output[0]!.content[0] }) +
        write("response.output_item.done", { output_index: 0, item: ended.output[0] }) +
        write(ended.status === "incomplete" ? "response.incomplete" : "response.completed", { response: ended })
      );
    },
    failure: "response_failed_mid_stream",
  });
});
