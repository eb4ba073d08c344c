// Text generation on POST /v1/run/{model}: a prompt or messages (with tools or JSON Mode) through
// the model, answered as Workers AI's {response, tool_calls?, usage} or its SSE stream.
import type { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ServiceError } from "../../errors/service-error";
import { capability, type ServedModel } from "../../tasks";
import { readToolText } from "../../tasks/text-generation/tool-parsers";
import { toolOptions } from "../../tasks/text-generation/tool-plan";
import { requireReady } from "../../tasks/model-lookup";
import type { ChatMessage, TemplateValue } from "../../tokenizers/chat-template";
import { losslessBody } from "../http/lossless-body";
import type { AppEnv } from "../http/services";
import { templateToolCalls } from "../openai/chat-messages";
import { collect, sseResponse, startGeneration } from "../openai/generation-stream";
import { generationOptions } from "../openai/sampling";
import { workersAiChunks } from "./run-chunks";
import { structuredOutputsOf } from "../openai/structured-fields";
import type { GenerationInput, Message } from "./schemas";
import { chatToolsOf, runToolCall, runToolPlan } from "./tools";
import { meteredFor } from "../http/limits";

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

function parseJson(text: string): { parsed: unknown } | undefined {
  try {
    return { parsed: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** The generation branch of the route: the body already parsed as GenerationInput. */
export async function runGeneration(
  c: Context<AppEnv>,
  model: ServedModel,
  body: GenerationInput,
): Promise<Response> {
  const generator = meteredFor(c, capability(model, "textGeneration", "model"));
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
      `The JSON was cut short at max_tokens (${maxTokens}); raise max_tokens. Text so far: ` +
        `${text.slice(0, 200)}`,
      { field: "max_tokens" },
    );
  }
  return c.json({ response: value.parsed, usage: done.usage }, 200);
}
