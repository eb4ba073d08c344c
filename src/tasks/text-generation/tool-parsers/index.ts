// Tool-call parsers by name, as vLLM's tool_parsers/: each format a manifest may name
// (generation.toolCallParser) has a reader of its own file; forced calls have one reader.
import type { ToolCallParser } from "../../../models/manifest";
import { ToolCallReader } from "./forced-calls";
import { HermesToolReader } from "./hermes";
import { Llama3JsonToolReader } from "./llama3-json";
import { MistralToolReader } from "./mistral";
import { PythonicToolReader } from "./pythonic";
import {
  type ForcedToolMode,
  type ToolCall,
  type ToolMode,
  type ToolTextReader,
  toolCallId,
} from "./tool-parser";

export type {
  ForcedToolMode,
  ToolCall,
  ToolCallDelta,
  ToolMode,
  ToolReading,
  ToolTextReader,
} from "./tool-parser";
export { toolCallId } from "./tool-parser";

/** The calls of a whole generated text (a forced choice). */
export function toolCallsIn(
  text: string,
  mode: ForcedToolMode,
  newId: () => string = toolCallId,
): ToolCall[] {
  const reader = new ToolCallReader(mode, newId);
  reader.push(text);
  return reader.calls;
}

/** Each "auto" parser's reader (every parser a manifest may name has one). */
const AUTO_READERS: Record<ToolCallParser, (newId: () => string) => ToolTextReader> = {
  hermes: (newId) => new HermesToolReader(newId),
  llama3_json: (newId) => new Llama3JsonToolReader(newId),
  llama4_json: (newId) => new Llama3JsonToolReader(newId),
  mistral: (newId) => new MistralToolReader(newId),
  pythonic: (newId) => new PythonicToolReader(newId),
  llama4_pythonic: (newId) => new PythonicToolReader(newId, true),
};

/** The reader of a tool choice's text. */
export function toolReader(mode: ToolMode, newId: () => string = toolCallId): ToolTextReader {
  if (mode.kind === "auto") return AUTO_READERS[mode.parser](newId);
  const reader = new ToolCallReader(mode, newId);
  return {
    calls: reader.calls,
    push: (text) => ({ content: "", calls: reader.push(text) }),
    end: () => ({ content: "", calls: [] }),
  };
}

/** A whole generated text read by a tool choice's reader: its content and its calls. */
export function readToolText(
  text: string,
  mode: ToolMode,
  newId: () => string = toolCallId,
): { content: string; calls: ToolCall[] } {
  const reader = toolReader(mode, newId);
  const content = reader.push(text).content + reader.end().content;
  return { content, calls: [...reader.calls] };
}
