// OpenAI's Responses API, text only: POST /v1/responses over the chat generation (the same
// template, sampler and stop handling as /v1/chat/completions).
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { capability } from "../../tasks";
import type { TextEvent, TokenLogprobs, Usage } from "../../tasks/text-generation/text-generation";
import type { ServiceError } from "../../errors/service-error";
import { findModel, requireReady } from "../../tasks/model-lookup";
import { toolOptions, toolPlanOf } from "../../tasks/text-generation/tool-plan";
import { toolReader, type ToolMode } from "../../tasks/text-generation/tool-parsers";
import { requireApiKey } from "../http/auth";
import { limitBody, requireJson } from "../http/body";
import { sseResponse } from "../http/event-stream";
import { BODY_ERRORS, MODEL_ERRORS, problemResponses } from "../http/problems";
import type { AppEnv } from "../http/services";
import { validationHook } from "../http/validation";
import { collect, startGeneration } from "./generation-stream";
import {
  chatToolsOf,
  FunctionTool,
  RESPONSES_FIELDS,
  ResponsesRequest,
  responsesChat,
  responsesLogprobs,
  ResponsesToolChoice,
  templateTools,
} from "./responses-request";
import {
  callId,
  entries,
  eventWriter,
  FunctionCallItem,
  hex,
  messageItem,
  OutputItems,
  OutputMessage,
  type OutputItem,
} from "./responses-output";
import { generationOptions } from "./sampling";
import { responseFormatOf, structuredOutputsOf, TextFormat } from "./structured-fields";

/** OpenAI's ResponseError: a code from its list (ours by the failure's status) and the message. */
const ResponseError = z.object({
  code: z.enum(["server_error", "rate_limit_exceeded", "invalid_prompt"]),
  message: z.string(),
});

export const ResponseObject = z
  .object({
    id: z.string(),
    object: z.literal("response"),
    created_at: z.number().int(),
    completed_at: z.number().int().nullable(),
    status: z.enum(["in_progress", "completed", "incomplete", "failed"]),
    error: ResponseError.nullable().openapi({
      description: "Why the Response failed (a stream's response.failed event); null otherwise",
    }),
    incomplete_details: z.object({ reason: z.literal("max_output_tokens") }).nullable(),
    instructions: z.string().nullable(),
    max_output_tokens: z.number().int().nullable(),
    model: z.string(),
    output: z.array(z.union([OutputMessage, FunctionCallItem])).openapi({
      description:
        'One assistant message; with function tools, function_call items (one per call), after a message of the text before them (tool_choice "auto")',
    }),
    parallel_tool_calls: z.boolean(),
    temperature: z.number(),
    top_p: z.number(),
    tool_choice: ResponsesToolChoice,
    tools: z.array(FunctionTool),
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
  .openapi("Response", {
    description:
      "OpenAI's Response object: one assistant message, its text as one output_text part",
  });
type ResponseObject = z.infer<typeof ResponseObject>;

type Done = Extract<TextEvent, { type: "done" }>;

type Base = Omit<
  ResponseObject,
  "status" | "error" | "completed_at" | "incomplete_details" | "output" | "usage"
>;

/** The Response in progress: nothing out yet. */
const inProgress = (base: Base): ResponseObject => ({
  ...base,
  status: "in_progress",
  error: null,
  completed_at: null,
  incomplete_details: null,
  output: [],
  usage: null,
});

/**
 * The Response once generation ended: "incomplete" when the length ran out; its items carry the
 * same status.
 */
function ended(
  base: Base,
  done: Done,
  output: (status: "completed" | "incomplete") => OutputItem[],
): ResponseObject {
  const incomplete = done.finishReason === "length";
  const status = incomplete ? "incomplete" : "completed";
  return {
    ...base,
    status,
    error: null,
    completed_at: Math.floor(Date.now() / 1000),
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    output: output(status),
    usage: usageOf(done.usage),
  };
}

/** The Response whose generation failed mid-stream: its items so far, "incomplete". */
function failed(base: Base, failure: ServiceError, output: OutputItem[]): ResponseObject {
  const code =
    failure.status === 429
      ? "rate_limit_exceeded"
      : failure.status >= 500
        ? "server_error"
        : "invalid_prompt";
  return {
    ...base,
    status: "failed",
    error: { code, message: failure.message },
    completed_at: null,
    incomplete_details: null,
    output,
    usage: null,
  };
}

/** Ends a Responses stream: its last event (response.completed …) ends it, or response.failed. */
const responsesEnd = (
  write: ReturnType<typeof eventWriter>,
  base: Base,
  output: () => OutputItem[],
) => ({
  end: () => "",
  error: (failure: ServiceError) =>
    write("response.failed", { response: failed(base, failure, output()) }),
  failure: "response_failed_mid_stream",
});

function usageOf(usage: Usage): NonNullable<ResponseObject["usage"]> {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
  };
}

const route = createRoute({
  method: "post",
  path: "/",
  operationId: "createResponse",
  summary: "OpenAI Responses API, text in and out (streamed with stream: true)",
  request: {
    body: { required: true, content: { "application/json": { schema: ResponsesRequest } } },
  },
  responses: {
    200: {
      description: "The Response, or its typed SSE events",
      content: {
        "application/json": { schema: ResponseObject },
        "text/event-stream": {
          schema: z.string().openapi({
            description:
              '`event: <type>` / `data: {event}` pairs, response.created … response.completed (or response.incomplete), no `data: [DONE]`; a failure after the headers ends it with response.failed (the Response, status "failed", its error)',
          }),
        },
      },
    },
    ...problemResponses("openai", 401, 429, BODY_ERRORS, MODEL_ERRORS),
  },
});

/**
 * One assistant message with one output_text part — with function tools, function_call items, after
 * the message of the text before them when the model chose (tool_choice "auto"); `status`
 * "incomplete" with `incomplete_details.reason` "max_output_tokens" when the length ran out.
 * Streamed, OpenAI's typed events, each named by its type and numbered: response.created,
 * response.in_progress, response.output_item.added, response.content_part.added,
 * response.output_text.delta per delta, then the .done events and response.completed (or
 * response.incomplete) last — no `data: [DONE]`, which is chat's; a failure after the headers is
 * response.failed, the Response with status "failed" and its error.
 */
export const responsesRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
responsesRoutes.use(requireApiKey);
responsesRoutes.on("POST", "*", requireJson, limitBody);
responsesRoutes.openapi(route, async (c) => {
  const body = c.req.valid("json");
  const model = findModel(c.get("services"), body.model, "model");
  const generator = capability(model, "textGeneration", "model");
  await requireReady(model);
  const maxTokens = body.max_output_tokens ?? undefined;
  const tools =
    body.tools == null || body.tools.length === 0 ? undefined : await templateTools(c.req);
  const prompt = await generator.prepare(
    {
      messages: responsesChat(body),
      ...(tools === undefined ? {} : { tools }),
      addGenerationPrompt: true,
    },
    maxTokens,
  );
  const logprobs = responsesLogprobs(body);
  const format = body.text?.format ?? { type: "text" as const };
  const plan = toolPlanOf(
    {
      ...chatToolsOf(body),
      parallel_tool_calls: body.parallel_tool_calls,
      response_format: responseFormatOf(format),
    },
    { name: model.manifest.name, parser: generator.manifest.generation.toolCallParser },
    RESPONSES_FIELDS,
  );
  const structured =
    plan?.structured ??
    structuredOutputsOf(
      { response_format: responseFormatOf(format) },
      { format: "text.format", schema: "text.format.schema" },
    );
  const options = {
    ...generationOptions({ temperature: body.temperature, top_p: body.top_p }, maxTokens),
    ...(logprobs === undefined ? {} : { logprobs }),
    ...toolOptions(plan),
    ...(structured === undefined ? {} : { structured }),
  };
  const started = await startGeneration(generator, prompt, options, c.req.raw.signal);
  const base: Base = {
    id: `resp_${hex()}`,
    object: "response" as const,
    created_at: Math.floor(Date.now() / 1000),
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: model.manifest.name,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    temperature: body.temperature ?? 1,
    top_p: body.top_p ?? 1,
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    text: { format, verbosity: "medium" as const },
    truncation: "disabled" as const,
    store: false as const,
    metadata: body.metadata ?? {},
    user: body.user ?? null,
  };
  if (plan !== undefined) return toolsResponse(base, started, plan.mode, body.stream ?? false);
  const itemId = `msg_${hex()}`;
  if (!body.stream) {
    const { text, done, logprobs: tokens } = await collect(started);
    return c.json(
      ended(base, done, (status) => [messageItem(itemId, status, text, tokens)]),
      200,
    );
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
      write("response.created", { response: inProgress(base) }) +
      write("response.in_progress", { response: inProgress(base) }) +
      write("response.output_item.added", {
        output_index: 0,
        item: {
          type: "message",
          id: itemId,
          status: "in_progress",
          role: "assistant",
          content: [],
        },
      }) +
      write("response.content_part.added", {
        ...at,
        part: { type: "output_text", text: "", annotations: [], logprobs: [] },
      }),
    event: (event) => {
      if (event.type === "text") {
        if (event.logprobs !== undefined) {
          all.push(...event.logprobs);
          pending.push(...event.logprobs);
        }
        if (event.text === "") return "";
        text += event.text;
        return write("response.output_text.delta", {
          ...at,
          delta: event.text,
          logprobs: take(),
        });
      }
      if (event.type !== "done") return "";
      const response = ended(base, event, (status) => [
        messageItem(itemId, status, text, logprobs === undefined ? undefined : all),
      ]);
      const item = response.output[0] as z.infer<typeof OutputMessage>;
      return (
        write("response.output_text.done", { ...at, text, logprobs: take() }) +
        write("response.content_part.done", { ...at, part: item.content[0] }) +
        write("response.output_item.done", { output_index: 0, item }) +
        write(response.status === "incomplete" ? "response.incomplete" : "response.completed", {
          response,
        })
      );
    },
    ...responsesEnd(write, base, () => [
      messageItem(itemId, "incomplete", text, logprobs === undefined ? undefined : all),
    ]),
  });
});

/**
 * A Response with tools in use: function_call items (one per call) and, with "auto", a message
 * item for the text before them. Streamed as OpenAI streams them: per call
 * response.output_item.added (its call_id and name), then response.function_call_arguments.delta
 * as the arguments are written, and response.function_call_arguments.done and
 * response.output_item.done when the next item starts or generation ends; a message's text as
 * a plain Response streams it.
 */
async function toolsResponse(
  base: Base,
  started: Awaited<ReturnType<typeof startGeneration>>,
  mode: ToolMode,
  stream: boolean,
): Promise<Response> {
  if (!stream) {
    const { text, done } = await collect(started);
    const items = new OutputItems(toolReader(mode, callId));
    items.read(text);
    items.read(undefined);
    return Response.json(ended(base, done, (status) => items.output(status)));
  }
  const write = eventWriter();
  const items = new OutputItems(toolReader(mode, callId), write);
  return sseResponse(started, {
    opening: () =>
      write("response.created", { response: inProgress(base) }) +
      write("response.in_progress", { response: inProgress(base) }),
    event: (event) => {
      if (event.type === "text") return items.read(event.text);
      if (event.type !== "done") return "";
      const held = items.read(undefined);
      const response = ended(base, event, (status) => items.output(status));
      const status = response.status === "incomplete" ? "incomplete" : "completed";
      return (
        held +
        items.close(status) +
        write(status === "incomplete" ? "response.incomplete" : "response.completed", { response })
      );
    },
    ...responsesEnd(write, base, () => items.output("incomplete")),
  });
}
