// The base every tool-call format's reader extends: text held until its call regions can be read,
// and the check for a tag cut off at the end of the text.
import { RegionCalls } from "./region-calls";
import type { ToolCall, ToolReading, ToolTextReader } from "./tool-parser";

/**
 * The length of the longest suffix of `text` that is a proper prefix of `tag` (vLLM's
 * partial_tag_overlap).
 */
export function partialTagOverlap(text: string, tag: string): number {
  for (let length = Math.min(text.length, tag.length - 1); length > 0; length -= 1) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}

/**
 * A tool-call format's reader: each push adds to `held`, the text not yet read, and `scan`
 * reads what it can of it into `out` (`final`: the generation has ended).
 */
export abstract class RegionReader implements ToolTextReader {
  protected readonly out: RegionCalls;
  protected held = "";

  constructor(newId: () => string, argumentKeys: readonly string[], keyed = false) {
    this.out = new RegionCalls(newId, argumentKeys, keyed);
  }

  get calls(): readonly ToolCall[] {
    return this.out.calls;
  }

  push(text: string): ToolReading {
    const reading = this.out.next();
    this.held += text;
    this.scan(false);
    return reading;
  }

  end(): ToolReading {
    const reading = this.out.next();
    this.scan(true);
    return reading;
  }

  protected abstract scan(final: boolean): void;
}
