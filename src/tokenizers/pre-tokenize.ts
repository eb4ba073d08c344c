// Normalizers and pre-tokenizers of the compact form, applied to the text between added
// tokens as the Rust crate applies them: normalize, then split into words step by step.
import type { NormalizerStep, PreTokenizerStep } from "./compact-format";

/** Applies the normalizer steps to one piece of text. */
export function normalize(text: string, steps: readonly NormalizerStep[]): string {
  let out = text;
  for (const step of steps) {
    switch (step.type) {
      case "unicode":
        out = out.normalize(step.form);
        break;
      case "lowercase":
        out = out.toLowerCase();
        break;
      case "prepend":
        if (out.length > 0) out = step.text + out;
        break;
      case "replace":
        out = out.replaceAll(step.from, step.to);
        break;
      default:
        step satisfies never;
    }
  }
  return out;
}

export type CompiledPreTokenizer = (piece: string, words: string[]) => void;

/** Compiles the steps once; the result appends a piece's words to `words`. */
export function compilePreTokenizer(steps: readonly PreTokenizerStep[]): CompiledPreTokenizer {
  const stages = steps.map((step): ((piece: string, out: string[]) => void) => {
    switch (step.type) {
      case "prefixSpace":
        return (piece, out) => void out.push(piece.startsWith(" ") ? piece : ` ${piece}`);
      case "split": {
        const pattern = new RegExp(step.pattern, "gu");
        return (piece, out) => split(piece, pattern, step.behavior, out);
      }
      default:
        return step satisfies never;
    }
  });
  if (stages.length === 1) {
    const [only] = stages;
    if (only !== undefined) return only;
  }
  return (piece, words) => {
    let current = [piece];
    for (const stage of stages) {
      const next: string[] = [];
      for (const part of current) stage(part, next);
      current = next;
    }
    for (const word of current) words.push(word);
  };
}

function split(
  piece: string,
  pattern: RegExp,
  behavior: Extract<PreTokenizerStep, { type: "split" }>["behavior"],
  out: string[],
): void {
  pattern.lastIndex = 0;
  if (behavior === "isolated") {
    let last = 0;
    for (let match = pattern.exec(piece); match !== null; match = pattern.exec(piece)) {
      const start = match.index;
      const end = start + match[0].length;
      if (end === start) {
        pattern.lastIndex++;
        continue;
      }
      if (start > last) out.push(piece.slice(last, start));
      out.push(match[0]);
      last = end;
    }
    if (last < piece.length) out.push(last === 0 ? piece : piece.slice(last));
    return;
  }
  // The other behaviours, as SplitDelimiterBehavior in the Rust crate's normalizer.rs.
  const parts: [number, number, boolean][] = [];
  let last = 0;
  for (let match = pattern.exec(piece); match !== null; match = pattern.exec(piece)) {
    const end = match.index + match[0].length;
    if (end === match.index) {
      pattern.lastIndex++;
      continue;
    }
    if (match.index > last) parts.push([last, match.index, false]);
    parts.push([match.index, end, true]);
    last = end;
  }
  if (last < piece.length) parts.push([last, piece.length, false]);
  const merged: [number, number][] = [];
  if (behavior === "removed") {
    for (const [start, end, isMatch] of parts) if (!isMatch) merged.push([start, end]);
  } else if (behavior === "mergedWithPrevious") {
    let previousMatch = false;
    for (const [start, end, isMatch] of parts) {
      const previous = merged.at(-1);
      if (isMatch && !previousMatch && previous !== undefined) previous[1] = end;
      else merged.push([start, end]);
      previousMatch = isMatch;
    }
  } else {
    let previousMatch = false;
    for (let i = parts.length - 1; i >= 0; i--) {
      const [start, end, isMatch] = parts[i] ?? [0, 0, false];
      const following = merged.at(-1);
      if (isMatch && !previousMatch && following !== undefined) following[0] = start;
      else merged.push([start, end]);
      previousMatch = isMatch;
    }
    merged.reverse();
  }
  for (const [start, end] of merged) out.push(piece.slice(start, end));
}
