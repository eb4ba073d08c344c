// POST /v1/run/{model}: the Workers AI binding's shapes (its output, not the REST envelope) for
// text and image classification and text generation; the model's capabilities pick the shape.
import { createRoute, OpenAPIHono, z, type Hook } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import { capability } from "../../tasks";
import { classifierOf } from "../classify/index";
import { LabelScoreSchema, Text } from "../classify/schemas";
import { ImageBytes } from "../classify/image-input";
import { collect, sseResponse, startGeneration } from "../openai/generation-stream";
import { BODY_ERRORS, MODEL_ERRORS, problemResponses } from "../http/problems";
import { TextToImageRunInput } from "../openai/images/request-schema";
import { runTextToImage } from "./run-image";
import { UsageSchema } from "../openai/responses";
import { workersAiChunks } from "../openai/stream-chunks";
import { generationOptions } from "../openai/sampling";
import { structuredOutputsOf } from "../openai/structured-fields";
import { serverTiming } from "../http/server-timing";
import { readToolText } from "../../tasks/text-generation/tool-parsers";
import type { ChatMessage, TemplateValue } from "../../tokenizers/chat-template";
import { losslessBody } from "../http/lossless-body";
import { chatToolsOf, RunToolChoice, RunTools, runToolCall, runToolPlan } from "./tools";
import { AssistantToolCall } from "../openai/tool-schemas";
import { toolOptions } from "../../tasks/text-generation/tool-plan";
import { templateToolCalls } from "../openai/chat-messages";
import type { AppEnv } from "../http/services";
import { findModel, requireReady } from "../../tasks/model-lookup";
import { parseBody, validationHook } from "../http/validation";
import { requireApiKey } from "../http/auth";
import { limitBody, requireJson } from "../http/body";

const ClassificationInput = z.object({ text: Text }).strict().openapi("TextClassificationInput");
const ImageClassificationInput = z
  .object({ image: ImageBytes })
  .strict()
  .openapi("ImageClassificationInput");

// Workers AI's RoleScopedChatInput: a tool's result comes back as {role: "tool", name, content};
// an assistant turn may carry the calls it made in OpenAI's shape, as Cloudflare's AI SDK
// provider (workers-ai-provider) writes them.
const Message = z
  .object({
    role: z.enum(["system", "user", "assistant", "tool"]),
    content: z.string(),
    name: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .openapi({ description: "With role tool: the function whose result this is" }),
    tool_call_id: z.string().min(1).max(256).optional().openapi({
      description:
        "With role tool: the call whose result this is (OpenAI's), else its name stands for it",
    }),
    tool_calls: z.array(AssistantToolCall).min(1).max(128).optional().openapi({
      description:
        "With role assistant: the calls that turn made, {id, type, function: {name, arguments: <JSON text>}}",
    }),
  })
  .strict()
  .refine((message) => message.tool_calls === undefined || message.role === "assistant", {
    message: "only an assistant message carries tool_calls",
    path: ["tool_calls"],
  });

/**
 * The messages as the chat template reads them: a tool result's call named by its id, or by the
 * function's name.
 */
function runMessages(messages: readonly z.infer<typeof Message>[]): ChatMessage[] {
  return messages.map(({ role, content, name, tool_call_id, tool_calls }, at) => {
    if (role === "tool")
      return {
        role,
        content,
        tool_call_id: tool_call_id ?? name ?? "",
        ...(name === undefined ? {} : { name }),
      };
    return tool_calls === undefined
      ? { role, content }
      : { role, content, tool_calls: templateToolCalls(tool_calls, at) };
  });
}
const GenerationInput = z
  .object({
    prompt: z.string().min(1).max(1_000_000).optional(),
    messages: z.array(Message).min(1).max(256).optional(),
    // As the binding: a prompt is sent as one user message through the chat template, unless raw.
    raw: z.boolean().optional().openapi({
      description: "With prompt: true sends it as it is, with no chat template (Workers AI's raw)",
    }),
    stream: z.boolean().optional(),
    // Workers AI's defaults: 256 tokens, temperature 0.6.
    max_tokens: z.number().int().min(1).max(1_000_000).optional(),
    temperature: z.number().min(0).max(5).optional(),
    top_p: z.number().gt(0).max(1).optional(),
    top_k: z.number().int().min(1).max(50).optional(),
    seed: z.number().int().min(1).max(9_999_999_999).optional(),
    // Workers AI's ranges; applied as the OpenAI routes apply them.
    repetition_penalty: z.number().gt(0).max(2).optional(),
    frequency_penalty: z.number().min(-2).max(2).optional(),
    presence_penalty: z.number().min(-2).max(2).optional(),
    // Workers AI's JSON Mode (developers.cloudflare.com/workers-ai/json-mode): the schema itself
    // under json_schema; the response is the parsed value; not streamed.
    response_format: z
      .discriminatedUnion("type", [
        z.object({ type: z.literal("json_object") }).strict(),
        z
          .object({
            type: z.literal("json_schema"),
            json_schema: z.union([z.record(z.string(), z.unknown()), z.boolean()]),
          })
          .strict(),
      ])
      .optional()
      .openapi({
        description:
          'Workers AI JSON Mode: {"type": "json_object"} or {"type": "json_schema", "json_schema": <a JSON Schema>}; the response is the parsed value',
      }),
    tools: RunTools,
    tool_choice: RunToolChoice,
  })
  .strict()
  .openapi("TextGenerationInput");

const runRoute = createRoute({
  method: "post",
  path: "/{model}",
  operationId: "runModel",
  summary:
    "Workers AI-style: text classification ({text} → [{label, score}]), image classification ({image: [bytes]} → [{label, score}]), text generation ({prompt | messages} → {response}) or text-to-image ({prompt, num_steps, guidance, seed, height, width} → image/png)",
  request: {
    params: z.object({ model: z.string().min(1) }),
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z.union([
            ClassificationInput,
            ImageClassificationInput,
            GenerationInput,
            TextToImageRunInput,
          ]),
        },
      },
    },
  },
  responses: {
    200: {
      description:
        'Classification: every label with its score, best first. Generation: {response, usage}, or SSE `data: {"response": …}` then `data: [DONE]`',
      content: {
        "application/json": {
          schema: z.union([
            z.array(LabelScoreSchema),
            z.object({
              response: z.unknown().openapi({
                description:
                  "The text (with tools, the text before the calls); with response_format, the parsed JSON value",
              }),
              tool_calls: z
                .array(
                  z.object({
                    id: z.string(),
                    type: z.literal("function"),
                    function: z.object({ name: z.string(), arguments: z.string() }),
                    name: z.string(),
                    arguments: z.unknown(),
                  }),
                )
                .optional()
                .openapi({
                  description:
                    "With tools, the calls the model made: {name, arguments: <value>} beside OpenAI's {id, type, function: {name, arguments: <JSON text>}}",
                }),
              usage: UsageSchema,
            }),
          ]),
        },
        "text/event-stream": { schema: z.string() },
        "image/png": {
          schema: z.string().openapi({ format: "binary", description: "Text-to-image: the PNG" }),
        },
      },
    },
    ...problemResponses("openai", 401, 429, BODY_ERRORS, MODEL_ERRORS),
  },
});

/**
 * A body the route's union refuses is described by the one schema meant for it: {text} or
 * {image} by their keys, otherwise the model's task. zod 4's union answers with the branch that
 * got furthest, so a generation body with `stream: "yes"` read "stream: Unrecognized key" (from
 * the text-to-image branch) instead of "expected boolean".
 */
const runBodyHook: Hook<unknown, AppEnv, string, unknown> = (result, c) => {
  if (!result.success && result.target === "json") {
    const body: unknown = "data" in result ? result.data : undefined;
    const object = typeof body === "object" && body !== null && !Array.isArray(body);
    const model = c.get("services").get(c.req.param("model") ?? "");
    const textToImage = model?.capabilities.textToImage !== undefined;
    parseBody(
      object && "text" in body
        ? ClassificationInput
        : object && "image" in body
          ? ImageClassificationInput
          : textToImage
            ? TextToImageRunInput
            : GenerationInput,
      body,
    );
  }
  return validationHook(result, c);
};

function parseJson(text: string): { parsed: unknown } | undefined {
  try {
    return { parsed: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/**
 * Text classification: {text} → [{label, score}]. Image classification: {image: [bytes 0–255]} (the
 * PNG or JPEG file's bytes) → [{label, score}], as @cf/microsoft/resnet-50 takes it. Text
 * generation: {prompt | messages, raw, stream, max_tokens, temperature, top_p, top_k, seed, the
 * three penalties, tools, tool_choice} → {response, tool_calls?} or SSE `data: {"response": "…"}` …
 * `data: [DONE]`.
 */
export const runRoutes = new OpenAPIHono<AppEnv>({ defaultHook: runBodyHook });
runRoutes.use(requireApiKey);
runRoutes.on("POST", "*", requireJson, limitBody);
runRoutes.openapi(runRoute, async (c) => {
  const { model: name } = c.req.valid("param");
  const valid = c.req.valid("json");
  const model = findModel(c.get("services"), name, "model");
  if (model.capabilities.textToImage !== undefined)
    return runTextToImage(model, valid, c.req.raw.signal);
  // A text-to-image body sent to a text model: its fields are named in the 400.
  const body = "text" in valid || "image" in valid ? valid : parseBody(GenerationInput, valid);
  if ("text" in body) {
    const classifier = classifierOf(model, "model");
    await requireReady(model);
    const { results, timings } = await classifier.classify(
      [body.text],
      classifier.manifest.labels.length,
      () => "text",
      c.req.raw.signal,
    );
    c.header("server-timing", serverTiming(timings));
    return c.json(results[0]?.labels ?? [], 200);
  }
  if ("image" in body) {
    const classifier = capability(model, "imageClassification", "model");
    await requireReady(model);
    const image = { bytes: Uint8Array.from(body.image), declaredImage: false };
    const { results, timings } = await classifier.classify(
      [image],
      classifier.manifest.labels.length,
      () => "image",
      c.req.raw.signal,
    );
    c.header("server-timing", serverTiming(timings));
    return c.json(results[0]?.labels ?? [], 200);
  }
  const generator = capability(model, "textGeneration", "model");
  // Workers AI's "unscoped prompt": turned into a user message for the chat template, unless raw.
  const prompted =
    body.prompt === undefined
      ? undefined
      : body.raw
        ? { prompt: body.prompt }
        : { messages: [{ role: "user", content: body.prompt }] };
  const input = body.messages !== undefined ? { messages: runMessages(body.messages) } : prompted;
  if (input === undefined || (body.messages !== undefined && body.prompt !== undefined)) {
    throw new ServiceError(400, "invalid_request", "Send exactly one of prompt or messages", {
      field: body.prompt === undefined ? "prompt" : "messages",
    });
  }
  const format = body.response_format;
  const hasTools = body.tools !== undefined && body.tools.length > 0;
  if (hasTools && format !== undefined)
    throw new ServiceError(
      400,
      "invalid_request",
      "JSON Mode and tools cannot be used together: send one",
      { field: "response_format" },
    );
  if (hasTools && body.raw)
    throw new ServiceError(
      400,
      "invalid_request",
      "tools go through the chat template, which raw skips: send messages, or a prompt without raw",
      { field: "raw" },
    );
  const plan = runToolPlan(body, {
    name: model.manifest.name,
    parser: generator.manifest.generation.toolCallParser,
  });
  const mode = plan?.mode;
  const sent = hasTools ? (await losslessBody(c.req)).tools : undefined;
  await requireReady(model);
  const maxTokens = body.max_tokens ?? 256;
  const tools = Array.isArray(sent) ? (chatToolsOf(sent) as TemplateValue[]) : undefined;
  const prompt = await generator.prepare(
    tools !== undefined && input.messages !== undefined
      ? { messages: input.messages, tools }
      : input,
    maxTokens,
  );
  if (format !== undefined && body.stream)
    throw new ServiceError(
      400,
      "invalid_request",
      "JSON Mode does not stream (as Workers AI's): send stream: false",
      { field: "stream" },
    );
  const structured =
    format === undefined
      ? undefined
      : structuredOutputsOf(
          {
            response_format:
              format.type === "json_object"
                ? format
                : {
                    type: "json_schema",
                    json_schema: { name: "json_mode", schema: format.json_schema },
                  },
          },
          { format: "response_format", schema: "response_format.json_schema" },
        );
  const options = {
    ...generationOptions(
      { ...body, response_format: undefined, temperature: body.temperature ?? 0.6 },
      maxTokens,
    ),
    ...(structured === undefined ? {} : { structured }),
    // As chat's: a forced call's constraint; with "auto", special tokens kept for the parser.
    ...toolOptions(plan),
  };
  const started = await startGeneration(generator, prompt, options, c.req.raw.signal);
  if (body.stream)
    return sseResponse(
      [started],
      workersAiChunks(mode === undefined ? undefined : { mode, call: runToolCall }),
    );
  const { text, done } = await collect(started);
  if (mode !== undefined) {
    const { content, calls } = readToolText(text, mode);
    return c.json(
      {
        response: content,
        ...(calls.length === 0 ? {} : { tool_calls: calls.map(runToolCall) }),
        usage: done.usage,
      },
      200,
    );
  }
  if (structured === undefined) return c.json({ response: text, usage: done.usage }, 200);
  // The value, parsed; cut short by max_tokens it is not JSON yet: a 422 that says so, with the
  // text.
  const value = done.finishReason === "stop" ? parseJson(text) : undefined;
  if (value === undefined) {
    throw new ServiceError(
      422,
      "unprocessable_input",
      `The JSON was cut short at max_tokens (${maxTokens}); raise max_tokens. Text so far: ${text.slice(0, 200)}`,
      { field: "max_tokens" },
    );
  }
  return c.json({ response: value.parsed, usage: done.usage }, 200);
});
