// Splits text on added tokens (leftmost-longest, as the Rust crate's Aho-Corasick
// matcher): special tokens can be left as text (parseSpecialTokens: false); the text
// between the tokens goes on to the normalizer and pre-tokenizer.
import type { AddedTokenEntry } from "./compact-format";

export interface AddedToken {
  id: number;
  content: string;
  special: boolean;
}

/** A matcher over one set of added tokens (those matched before or after normalizing). */
export class AddedTokenMatcher {
  private readonly byContent = new Map<string, AddedToken>();
  /** Per first two UTF-16 units: the lengths (≥ 2) of the tokens starting with them, longest
   * first — keyed by two units so that a newline or "<" in running text tries few slices. */
  private readonly lengths = new Map<number, number[]>();
  /** Per UTF-16 unit: the one-unit token spelled by it. */
  private readonly single = new Map<number, AddedToken>();
  /** 1 for each UTF-16 unit some token starts with: most text is skipped on this alone. */
  private readonly starts = new Uint8Array(0x10000);

  constructor(tokens: readonly AddedToken[]) {
    for (const token of tokens) {
      if (token.content.length === 0) continue;
      this.byContent.set(token.content, token);
      this.starts[token.content.charCodeAt(0)] = 1;
      if (token.content.length === 1) {
        this.single.set(token.content.charCodeAt(0), token);
        continue;
      }
      const key = pairKey(token.content, 0);
      const lengths = this.lengths.get(key) ?? [];
      if (!lengths.includes(token.content.length)) lengths.push(token.content.length);
      this.lengths.set(key, lengths);
    }
    for (const lengths of this.lengths.values()) lengths.sort((a, b) => b - a);
  }

  get empty(): boolean {
    return this.byContent.size === 0;
  }

  /**
   * Calls onText for each stretch of text and onToken for each added token, in order.
   * A special token found when parseSpecial is false stays text (and, as in Rust, its
   * characters cannot start another match).
   */
  split(
    text: string,
    parseSpecial: boolean,
    onText: (text: string) => void,
    onToken: (token: AddedToken) => void,
  ): void {
    let textStart = 0;
    const starts = this.starts;
    for (let i = 0; i < text.length; ) {
      if (starts[text.charCodeAt(i)] === 0) {
        i++;
        continue;
      }
      const lengths = i + 1 < text.length ? this.lengths.get(pairKey(text, i)) : undefined;
      let found: AddedToken | undefined;
      if (lengths !== undefined) {
        for (const length of lengths) {
          if (i + length > text.length) continue;
          found = this.byContent.get(text.slice(i, i + length));
          if (found !== undefined) break;
        }
      }
      found ??= this.single.get(text.charCodeAt(i));
      if (found === undefined) {
        i++;
        continue;
      }
      if (found.special && !parseSpecial) {
        i += found.content.length;
        continue;
      }
      if (i > textStart) onText(text.slice(textStart, i));
      onToken(found);
      i += found.content.length;
      textStart = i;
    }
    if (textStart < text.length) onText(textStart === 0 ? text : text.slice(textStart));
  }
}

function pairKey(text: string, at: number): number {
  return text.charCodeAt(at) * 0x10000 + text.charCodeAt(at + 1);
}

/** Reads the header's [id, content, special, normalized] rows. */
export function addedTokens(entries: readonly AddedTokenEntry[]): {
  raw: AddedToken[];
  normalized: AddedToken[];
} {
  const raw: AddedToken[] = [];
  const normalized: AddedToken[] = [];
  for (const [id, content, special, isNormalized] of entries) {
    (isNormalized === 1 ? normalized : raw).push({ id, content, special: special === 1 });
  }
  return { raw, normalized };
}
