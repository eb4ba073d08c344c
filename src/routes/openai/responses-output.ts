// The Responses API's output items (the assistant message, function_call items) and the typed
// stream events that announce, fill and close them.
import { z } from "@hono/zod-openapi";
import type { TokenLogprobs } from "../../tasks/text-generation/text-generation";
import { chatLogprobs } from "./response-logprobs";
import type { ToolCall, ToolTextReader } from "../../tasks/text-generation/tool-parsers";

const TopLogprob = z.object({
  token: z.string(),
  logprob: z.number(),
  bytes: z.array(z.number().int()).nullable(),
});
const OutputText = z.object({
  type: z.literal("output_text"),
  text: z.string(),
  annotations: z.array(z.unknown()).max(0),
  logprobs: z.array(TopLogprob.extend({ top_logprobs: z.array(TopLogprob) })).openapi({
    description:
      "With include message.output_text.logprobs, one entry per output token; [] otherwise",
  }),
});
export const OutputMessage = z.object({
  type: z.literal("message"),
  id: z.string(),
  status: z.enum(["in_progress", "completed", "incomplete"]),
  role: z.literal("assistant"),
  content: z.array(OutputText),
});
export const FunctionCallItem = z
  .object({
    type: z.literal("function_call"),
    id: z.string(),
    call_id: z.string(),
    name: z.string(),
    arguments: z.string().openapi({ description: "The JSON text the model wrote" }),
    status: z.enum(["in_progress", "completed", "incomplete"]),
  })
  .openapi("ResponseFunctionToolCall");
export type OutputItem = z.infer<typeof OutputMessage> | z.infer<typeof FunctionCallItem>;

export const hex = () => crypto.randomUUID().replaceAll("-", "");

export const messageItem = (
  id: string,
  status: "completed" | "incomplete",
  text: string,
  logprobs: readonly TokenLogprobs[] | undefined,
): OutputItem => ({
  type: "message",
  id,
  status,
  role: "assistant",
  content: [{ type: "output_text", text, annotations: [], logprobs: entries(logprobs) }],
});

export const callItem = (
  id: string,
  call: ToolCall,
  status: z.infer<typeof FunctionCallItem>["status"],
): z.infer<typeof FunctionCallItem> => ({
  type: "function_call",
  id,
  call_id: call.id,
  name: call.function.name,
  arguments: call.function.arguments,
  status,
});

export const callId = () => `call_${hex()}`;

/**
 * Output tokens' logprobs as OpenAI's Responses API lists them (the chat shape: token, logprob,
 * bytes, top_logprobs).
 */
export const entries = (logprobs: readonly TokenLogprobs[] | undefined) =>
  logprobs === undefined ? [] : (chatLogprobs(logprobs)?.content ?? []);

/** OpenAI's stream events carry their type as the SSE event name too, and a sequence number. */
export function eventWriter() {
  let sequence = 0;
  return (type: string, fields: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
}

/**
 * A Response's output items as tool-choice text is read: messages (the content) and calls, in
 * order.
 */
export class OutputItems {
  readonly items: (
    | { type: "message"; id: string; text: string }
    | { type: "call"; id: string; call: number }
  )[] = [];
  private open = false;

  constructor(
    private readonly reader: ToolTextReader,
    /** Frames the stream's events; undefined: no stream, the items alone. */
    private readonly write?: ReturnType<typeof eventWriter>,
  ) {}

  /** Reads a piece of generated text (undefined: generation ended) → its events. */
  read(text: string | undefined): string {
    const { content, calls } = text === undefined ? this.reader.end() : this.reader.push(text);
    let frames = "";
    if (content !== "") {
      let last = this.items.at(-1);
      if (last?.type !== "message" || !this.open) {
        frames += this.close("completed");
        last = { type: "message", id: `msg_${hex()}`, text: "" };
        this.items.push(last);
        this.open = true;
        frames += this.event("response.output_item.added", {
          output_index: this.items.length - 1,
          item: {
            type: "message",
            id: last.id,
            status: "in_progress",
            role: "assistant",
            content: [],
          },
        });
        frames += this.event("response.content_part.added", {
          ...this.at(),
          part: { type: "output_text", text: "", annotations: [], logprobs: [] },
        });
      }
      last.text += content;
      frames += this.event("response.output_text.delta", {
        ...this.at(),
        delta: content,
        logprobs: [],
      });
    }
    for (const delta of calls) {
      if (delta.id !== undefined) {
        frames += this.close("completed");
        this.items.push({ type: "call", id: `fc_${hex()}`, call: delta.index });
        this.open = true;
        const item = this.output("in_progress").at(-1);
        frames += this.event("response.output_item.added", {
          output_index: this.items.length - 1,
          item,
        });
      }
      if (delta.function.arguments !== "") {
        frames += this.event("response.function_call_arguments.delta", {
          item_id: this.items.at(-1)!.id,
          output_index: this.items.length - 1,
          delta: delta.function.arguments,
        });
      }
    }
    return frames;
  }

  /** The items as the Response lists them, each with `status`. */
  output(status: "in_progress" | "completed" | "incomplete"): OutputItem[] {
    return this.items.map((item) =>
      item.type === "message"
        ? {
            type: "message",
            id: item.id,
            status,
            role: "assistant",
            content: [{ type: "output_text", text: item.text, annotations: [], logprobs: [] }],
          }
        : callItem(item.id, this.reader.calls[item.call]!, status),
    );
  }

  /** The last item's closing events (its text or arguments done, then the item). */
  close(status: "completed" | "incomplete"): string {
    if (!this.open) return "";
    this.open = false;
    const index = this.items.length - 1;
    const item = { ...this.output(status)[index]! };
    if (item.type === "message") {
      return (
        this.event("response.output_text.done", {
          ...this.at(),
          text: item.content[0]!.text,
          logprobs: [],
        }) +
        this.event("response.content_part.done", { ...this.at(), part: item.content[0] }) +
        this.event("response.output_item.done", { output_index: index, item })
      );
    }
    return (
      this.event("response.function_call_arguments.done", {
        item_id: item.id,
        output_index: index,
        name: item.name,
        arguments: item.arguments,
      }) + this.event("response.output_item.done", { output_index: index, item })
    );
  }

  private at() {
    return {
      item_id: this.items.at(-1)!.id,
      output_index: this.items.length - 1,
      content_index: 0,
    };
  }

  private event(type: string, fields: Record<string, unknown>): string {
    return this.write?.(type, fields) ?? "";
  }
}
