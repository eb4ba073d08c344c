// OpenAI's Responses API, text only: POST /v1/responses over the chat generation (the same
// template, sampler and stop handling as /v1/chat/completions).
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { capability } from "../../tasks";
import { findModel, requireReady } from "../../tasks/model-lookup";
import { toolOptions, toolPlanOf } from "../../tasks/text-generation/tool-plan";
import { requireScope } from "../http/auth";
import { limitBody, requireJson } from "../http/body";
import { BODY_ERRORS, MODEL_ERRORS, problemResponses, KEY_ERRORS } from "../http/problems";
import type { AppEnv } from "../http/services";
import { validationHook } from "../http/validation";
import { collect, startGeneration, versionHeaders } from "./generation-stream";
import { messageEvents, toolsResponse } from "./responses-events";
import { type Base, ended, ResponseObject } from "./responses-object";
import {
  chatToolsOf,
  RESPONSES_FIELDS,
  ResponsesRequest,
  responsesChat,
  responsesLogprobs,
  templateTools,
} from "./responses-request";
import { hex, messageItem } from "./responses-output";
import { generationOptions } from "./sampling";
import { responseFormatOf, structuredOutputsOf } from "./structured-fields";
import { meteredFor } from "../http/limits";

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
              "`event: <type>` / `data: {event}` pairs, response.created … response.completed " +
              "(or response.incomplete), no `data: [DONE]`; a failure after the headers ends " +
              'it with response.failed (the Response, status "failed", its error)',
          }),
        },
      },
    },
    ...problemResponses("openai", KEY_ERRORS, BODY_ERRORS, MODEL_ERRORS),
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
responsesRoutes.use(requireScope("generate", { reservesTokens: true }));
responsesRoutes.on("POST", "*", requireJson, limitBody);
responsesRoutes.openapi(route, async (c) => {
  const body = c.req.valid("json");
  const model = findModel(c.get("services"), body.model, "model");
  const generator = meteredFor(c, capability(model, "textGeneration", "model"));
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
  // A model served in two versions names the one that accepted the request.
  const named = (response: Response) => {
    for (const [name, value] of Object.entries(versionHeaders([started])))
      response.headers.set(name, value);
    return response;
  };
  if (plan !== undefined)
    return named(await toolsResponse(base, started, plan.mode, body.stream ?? false));
  const itemId = `msg_${hex()}`;
  if (!body.stream) {
    const { text, done, logprobs: tokens } = await collect(started);
    return named(
      c.json(
        ended(base, done, (status) => [messageItem(itemId, status, text, tokens)]),
        200,
      ),
    );
  }
  return named(messageEvents(base, started, itemId, logprobs !== undefined));
});
