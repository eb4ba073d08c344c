// The tool-call readers' tests' harness: a text pushed to a reader in pieces, the deltas joined.
import { expect } from "vitest";
import {
  readToolText,
  toolReader,
  type ToolMode,
} from "../../src/tasks/text-generation/tool-parsers";

export interface Joined {
  content: string;
  calls: { id?: string; name?: string; arguments: string }[];
}

/**
 * The text pushed in pieces at the given cut points, then the end: content and calls joined from
 * the deltas.
 */
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
      if (delta.id !== undefined)
        result.calls[delta.index] = { id: delta.id, name: delta.function.name, arguments: "" };
      result.calls[delta.index]!.arguments += delta.function.arguments;
    }
  }
  return result;
}

/** The stream's reading, ids left out. */
function streamedWithoutIds(mode: ToolMode, text: string, cuts: readonly number[]): Joined {
  const { content, calls } = streamedReading(mode, text, cuts);
  return { content, calls: calls.map(({ name, arguments: args }) => ({ name, arguments: args })) };
}

/**
 * The whole text's reading (ids left out), checked to equal the stream's at every stream interval
 * up to 8 and at 60 seeded random cuts.
 */
export function readEveryCut(mode: ToolMode, text: string, seed: number): Joined {
  const { content, calls } = readToolText(text, mode);
  const whole = {
    content,
    calls: calls.map((call) => ({ name: call.function.name, arguments: call.function.arguments })),
  };
  const positions = Array.from({ length: text.length - 1 }, (_, i) => i + 1);
  for (let interval = 1; interval <= 8; interval += 1)
    expect(
      streamedWithoutIds(
        mode,
        text,
        positions.filter((p) => p % interval === 0),
      ),
      `interval ${interval}`,
    ).toEqual(whole);
  for (let round = 0; round < 60; round += 1) {
    expect(
      streamedWithoutIds(
        mode,
        text,
        positions.filter(() => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % 4 === 0)),
      ),
    ).toEqual(whole);
  }
  return whole;
}
