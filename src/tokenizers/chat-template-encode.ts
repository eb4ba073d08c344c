// Encoding a rendered chat prompt: the template's markup with special tokens parsed, message and
// tool text without, so a user cannot type a control token.
import {
  compileChatTemplate,
  templateMarkupCandidates,
  type ChatSegment,
  type ChatTemplateInput,
} from "./chat-template";
import type { TextTokenizer } from "./tokenizer";

export interface ChatMarkup {
  /** Strings the template emits that the tokenizer turns into one control id each. */
  tokens: readonly string[];
  /** Those the tokenizer would still parse with parseSpecialTokens: false. */
  parsedAnyway: ReadonlySet<string>;
}

/** Finds the template's markup tokens: candidates in its source (and bos/eos) that this
 * tokenizer encodes as exactly one id, the id of that very string. */
export function chatMarkup(
  tokenizer: TextTokenizer,
  templateSource: string,
  extra: ReadonlyArray<string | undefined> = [],
): ChatMarkup {
  const candidates = new Set([
    ...templateMarkupCandidates(templateSource),
    ...extra.filter((token): token is string => token !== undefined && token !== ""),
  ]);
  const tokens: string[] = [];
  const parsedAnyway = new Set<string>();
  for (const candidate of candidates) {
    const id = tokenizer.tokenToId(candidate);
    const ids = tokenizer.encode(candidate);
    if (id === undefined || ids.length !== 1 || ids[0] !== id) continue;
    tokens.push(candidate);
    const plain = tokenizer.encode(candidate, { parseSpecialTokens: false });
    if (plain.length === 1 && plain[0] === id) parsedAnyway.add(candidate);
  }
  return { tokens, parsedAnyway };
}

/**
 * Ids of a rendered prompt; text from messages never yields a markup token's id.
 *
 * parseSpecialTokens: false only covers *special* tokens (as the Rust crate's encode_special_tokens
 * does), so markup tokens that are merely "added" (DeepSeek V3's <｜User｜>, Qwen 3's <tool_call>)
 * are broken apart when a user types them.
 */
export function encodeChat(
  tokenizer: TextTokenizer,
  segments: readonly ChatSegment[],
  markup: ChatMarkup,
): number[] {
  return segments.flatMap((segment) =>
    segment.trusted
      ? tokenizer.encode(segment.text)
      : encodeUntrusted(tokenizer, segment.text, markup),
  );
}

function encodeUntrusted(tokenizer: TextTokenizer, text: string, markup: ChatMarkup): number[] {
  const dangerous = [...markup.parsedAnyway].sort((a, b) => b.length - a.length);
  const at = firstOccurrence(text, dangerous);
  if (at === undefined) return tokenizer.encode(text, { parseSpecialTokens: false });
  const [index, token] = at;
  // Encoded in two pieces, the token's string cannot match as a whole.
  return [
    ...(index > 0 ? tokenizer.encode(text.slice(0, index), { parseSpecialTokens: false }) : []),
    ...tokenizer.encode(token.slice(0, 1), { parseSpecialTokens: false }),
    ...encodeUntrusted(tokenizer, text.slice(index + 1), markup),
  ];
}

function firstOccurrence(text: string, tokens: readonly string[]): [number, string] | undefined {
  let best: [number, string] | undefined;
  for (const token of tokens) {
    const index = text.indexOf(token);
    if (index !== -1 && (best === undefined || index < best[0])) best = [index, token];
  }
  return best;
}

/** The whole path for a model: its template compiled once against its tokenizer; each call
 * renders the messages and returns the prompt's ids (what the generation loop sends). */
export function chatPromptEncoder(
  tokenizer: TextTokenizer,
  templateSource: string,
  special: { bos_token?: string; eos_token?: string } = {},
) {
  const markup = chatMarkup(tokenizer, templateSource, [special.bos_token, special.eos_token]);
  const template = compileChatTemplate(templateSource, { controlTokens: markup.tokens });
  return {
    markup,
    render: (input: Omit<ChatTemplateInput, "bos_token" | "eos_token">) =>
      template.render({ ...input, ...special }),
    encode: (input: Omit<ChatTemplateInput, "bos_token" | "eos_token">) =>
      encodeChat(tokenizer, template.render({ ...input, ...special }), markup),
  };
}
