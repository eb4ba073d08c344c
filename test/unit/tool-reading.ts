// The tool-call readers' tests' harness: a text pushed to a reader in pieces, the deltas joined.
import { toolReader, type ToolMode } from "../../src/routes/openai/tool-call-reader";

export interface Joined {
  content: string;
  calls: { id?: string; name?: string; arguments: string }[];
}

/** The text pushed in pieces at the given cut points, then the end: content and calls joined from the deltas. */
export function streamedReading(mode: ToolMode, text: string, cuts: readonly number[]): Joined {
  const reader = toolReader(mode);
  const result: Joined = { content: "", calls: [] };
  const readings = [];
  let at = 0;
  for (const cut of [...cuts, text.length]) {
    readings.push(reader.push(text.slice(at, cut)));
    at = cut;
  }
  readings.push(reader.end());
  for (const { content, calls } of readings) {
    result.content += content;
    for (const delta of calls) {
      if (delta.id !== undefined) result.calls[delta.index] = { id: delta.id, name: delta.function.name, arguments: "" };
      result.calls[delta.index]!.arguments += delta.function.arguments;
    }
  }
  return result;
}
