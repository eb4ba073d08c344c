// Generated tokens named for logprobs: each id's text alone (vLLM's decode of the one id) and
// its own bytes, named once per tokenizer — so once per isolate, not per request.
import { memoWeak } from "../../memos";
import type { TokenLogprob } from "../../runtime";
import type { TextTokenizer } from "../../tokenizers/tokenizer";

/** A token as logprobs name it: its text alone (vLLM's decode of the one id) and its bytes. */
export interface TokenText {
  token: string;
  /**
   * The token's own bytes (for a byte-level tokenizer, a piece of a UTF-8 character may be one).
   */
  bytes: number[];
  /** Its log-probability (the model's own distribution); -Infinity where it has none. */
  logprob: number;
}

/** A generated token's logprob entry: itself and the likeliest tokens at its position. */
export interface TokenLogprobs extends TokenText {
  top: TokenText[];
}

const utf8 = new TextEncoder();

/**
 * Per tokenizer, so once per isolate: each id's text alone (vLLM's decode of the one id) and its
 * bytes.
 */
const tokenNames = memoWeak<TextTokenizer, (id: number) => Omit<TokenText, "logprob">>(
  "text-generation.token-names",
);

function tokenNamer(text: TextTokenizer): (id: number) => Omit<TokenText, "logprob"> {
  let namer = tokenNames.get(text);
  if (namer === undefined) {
    const pieces = text.tokenPieces?.();
    const named = new Map<number, Omit<TokenText, "logprob">>();
    namer = (id) => {
      let entry = named.get(id);
      if (entry === undefined) {
        const token = text.decode([id]);
        // The tokenizer's own bytes where it has them (a piece of a UTF-8 character is exact
        // there).
        entry = { token, bytes: [...(pieces?.(id) ?? utf8.encode(token))] };
        named.set(id, entry);
      }
      return entry;
    };
    tokenNames.set(text, namer);
  }
  return namer;
}

/**
 * A prompt token's logprob entry: as a generated token's, or its name alone where it has none (the
 * first).
 */
export type PromptTokenLogprobs = TokenLogprobs | Omit<TokenText, "logprob">;

/** Names a generation's logprobs as tokens. */
export function logprobNamer(
  text: TextTokenizer,
): (logprob: TokenLogprob, id: number) => TokenLogprobs {
  const name = tokenNamer(text);
  const entry = (id: number, logprob: number): TokenText => ({ ...name(id), logprob });
  return (logprob, id) => ({
    ...entry(id, logprob.logprob),
    top: logprob.top.map(([other, value]) => entry(other, value)),
  });
}

/** Names a prompt's logprobs as tokens (vLLM's echo): null entries by their name alone. */
export function promptLogprobNamer(
  text: TextTokenizer,
): (logprobs: ReadonlyArray<TokenLogprob | null>, ids: readonly number[]) => PromptTokenLogprobs[] {
  const [name, named] = [tokenNamer(text), logprobNamer(text)];
  return (logprobs, ids) =>
    ids.map((id, i) => {
      const logprob = logprobs[i];
      return logprob == null ? name(id) : named(logprob, id);
    });
}
