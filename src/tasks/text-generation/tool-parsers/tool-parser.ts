// The tool-parser contract: what a tool choice makes of generated text (a forced call, or
// "auto" in the model's own format), the calls and streamed deltas a parser reads out of it.
import type { ToolCallParser } from "../../../models/manifest";

/**
 * What a tool choice makes of the text: a forced call (named, "required"), or "auto" — text,
 * calls in the model's own format, or both, read by the model's parser.
 */
export type ToolMode =
  | { kind: "named"; name: string }
  | { kind: "required" }
  | { kind: "auto"; parser: ToolCallParser };
/** A tool choice that forces a call: the text is JSON (tool-calls.ts builds its schema). */
export type ForcedToolMode = Extract<ToolMode, { kind: "named" | "required" }>;

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** OpenAI's streamed tool-call delta: the first of a call carries its id, type and name. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function: { name?: string; arguments: string };
}

/** What a piece of generated text makes: message text, and tool-call deltas. */
export interface ToolReading {
  content: string;
  calls: ToolCallDelta[];
}

/** Reads tool calls out of generated text as it arrives. */
export interface ToolTextReader {
  /** The calls so far; the last one's arguments may be unfinished. */
  readonly calls: readonly ToolCall[];
  push(text: string): ToolReading;
  /** Generation ended: what was held back. */
  end(): ToolReading;
}

/** vLLM's tool call ids (vllm/renderers/chat_utils.py make_tool_call_id). */
export const toolCallId = () => `chatcmpl-tool-${crypto.randomUUID().replaceAll("-", "")}`;
