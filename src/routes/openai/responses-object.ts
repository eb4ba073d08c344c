// The Responses API's Response object: its schema, and the Response in each state a generation
// passes through (in progress, ended, failed).
import { z } from "@hono/zod-openapi";
import type { ServiceError } from "../../errors/service-error";
import type { TextEvent, Usage } from "../../tasks/text-generation/text-generation";
import { FunctionTool, ResponsesToolChoice } from "./responses-request";
import { FunctionCallItem, OutputMessage, type OutputItem } from "./responses-output";
import { TextFormat } from "./structured-fields";

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
        "One assistant message; with function tools, function_call items (one per call), after " +
        'a message of the text before them (tool_choice "auto")',
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
export type ResponseObject = z.infer<typeof ResponseObject>;

type Done = Extract<TextEvent, { type: "done" }>;

export type Base = Omit<
  ResponseObject,
  "status" | "error" | "completed_at" | "incomplete_details" | "output" | "usage"
>;

/** The Response in progress: nothing out yet. */
export const inProgress = (base: Base): ResponseObject => ({
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
export function ended(
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
export function failed(base: Base, failure: ServiceError, output: OutputItem[]): ResponseObject {
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

function usageOf(usage: Usage): NonNullable<ResponseObject["usage"]> {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
  };
}
