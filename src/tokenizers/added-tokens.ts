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
  /** Per first UTF-16 unit: the token lengths starting with it, longest first. */
  private readonly lengths = new Map<number, number[]>();

  constructor(tokens: readonly AddedToken[]) {
    for (const token of tokens) {
      if (token.content.length === 0) continue;
      this.byContent.set(token.content, token);
      const first = token.content.charCodeAt(0);
      const lengths = this.lengths.get(first) ?? [];
      if (!lengths.includes(token.content.length)) lengths.push(token.content.length);
      this.lengths.set(first, lengths);
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
  split(text: string, parseSpecial: boolean, onText: (text: string) => void, onToken: (token: AddedToken) => void): void {
    let textStart = 0;
    for (let i = 0; i < text.length; ) {
      const lengths = this.lengths.get(text.charCodeAt(i));
      let found: AddedToken | undefined;
      if (lengths !== undefined) {
        for (const length of lengths) {
          found = this.byContent.get(text.slice(i, i + length));
          if (found !== undefined) break;
        }
      }
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

/** Reads the header's [id, content, special, normalized] rows. */
export function addedTokens(entries: readonly AddedTokenEntry[]): { raw: AddedToken[]; normalized: AddedToken[] } {
  const raw: AddedToken[] = [];
  const normalized: AddedToken[] = [];
  for (const [id, content, special, isNormalized] of entries) {
    (isNormalized === 1 ? normalized : raw).push({ id, content, special: special === 1 });
  }
  return { raw, normalized };
}
