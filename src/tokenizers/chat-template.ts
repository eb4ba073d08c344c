// Chat templates rendered exactly as transformers renders them, and split into segments so that
// only the template's own markup can become control tokens.
import { memoMap } from "../memos";
import { Interpreter } from "@huggingface/jinja";
import { ServiceError } from "../errors/service-error";
import { markEmittedLiterals, parseTemplate, type Program } from "./chat-template-ast";
import { createEnvironment, TemplateRaise, type TemplateValue } from "./chat-template-environment";
import { normalizeMessages, stringsIn } from "./chat-template-messages";

export { JsonNumber, parseLosslessJson, type LosslessJson } from "./chat-template-json";
export type { TemplateValue } from "./chat-template-environment";

export interface ChatSegment {
  text: string;
  /** Template markup: special tokens allowed. */
  trusted: boolean;
}

/** A message as templates read it: role, content (string, text parts or null), tool calls… */
export type ChatMessage = { readonly [key: string]: TemplateValue };

export interface ChatTemplateInput {
  /** Messages (ChatMessage objects; anything else is the template's business). */
  messages: readonly TemplateValue[];
  tools?: readonly TemplateValue[] | null;
  add_generation_prompt: boolean;
  bos_token?: string;
  eos_token?: string;
  /** Further template variables (vLLM's chat_template_kwargs, e.g. enable_thinking). */
  kwargs?: Readonly<Record<string, TemplateValue>>;
}

export interface ChatTemplateOptions {
  /** Strings the tokenizer turns into control ids: its added tokens. */
  controlTokens: readonly string[];
  /** strftime_now's clock; tests freeze it. */
  now?: () => Date;
}

export interface ChatTemplate {
  /** The prompt as segments; their concatenation is the reference rendering. */
  render(input: ChatTemplateInput): ChatSegment[];
}

/** Markers use a private-use character that appears in neither the template nor the input. */
const MARKER_CANDIDATES = Array.from({ length: 256 }, (_, i) => String.fromCharCode(0xe000 + i));

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Parses a template once; renders as often as needed. A template that does not parse throws.
 *
 * Text typed into a message that spells `<|im_start|>` or `<|eot_id|>` stays text. How the split is
 * found: the template is rendered twice — as written (the prompt, byte for byte), and with every
 * control token that the template itself emits (string literals in output positions,
 * bos_token/eos_token) replaced by a marker that no input contains. Markers are trusted segments,
 * everything between them untrusted. Both renders must agree once markers are put back; if they do
 * not, the template inspects control-token text inside the messages and the request is refused
 * rather than guessed at.
 */
export function compileChatTemplate(source: string, options: ChatTemplateOptions): ChatTemplate {
  const now = options.now ?? (() => new Date());
  const plain = parseTemplate(source);
  // Only tokens the template can emit matter: those in its text, and the bos/eos values.
  const inTemplate = options.controlTokens.filter(
    (token) => token !== "" && source.includes(token),
  );
  const marked = new Map<string, Program>();

  const markedFor = (marker: string, tokens: readonly string[]): Program => {
    const key = `${marker}\u0000${tokens.join("\u0000")}`;
    let program = marked.get(key);
    if (program === undefined) {
      program = parseTemplate(source);
      const pattern = tokenPattern(tokens);
      if (pattern !== undefined)
        markEmittedLiterals(program, (text) =>
          text.replace(pattern, (token) => `${marker}${tokens.indexOf(token)}${marker}`),
        );
      if (marked.size > 16) marked.clear();
      marked.set(key, program);
    }
    return program;
  };

  return {
    render(input) {
      const messages = normalizeMessages(input.messages);
      const variables = (
        bos: string | undefined,
        eos: string | undefined,
      ): Record<string, TemplateValue> => ({
        ...input.kwargs,
        messages,
        // transformers passes tools=None and documents=None when there are none.
        tools: input.tools ?? null,
        documents: null,
        add_generation_prompt: input.add_generation_prompt,
        bos_token: bos,
        eos_token: eos,
      });
      const prompt = run(plain, variables(input.bos_token, input.eos_token), now);

      const untrusted = [
        ...stringsIn(messages),
        ...stringsIn(input.tools ?? []),
        ...stringsIn(Object.values(input.kwargs ?? {})),
      ];
      const haystack = untrusted.join("\u0000");
      const marker = MARKER_CANDIDATES.find(
        (candidate) => !haystack.includes(candidate) && !source.includes(candidate),
      );
      if (marker === undefined) {
        throw new ServiceError(
          400,
          "invalid_request",
          "The messages use every private-use character the renderer marks prompts with",
          { field: "messages" },
        );
      }
      const tokens = [
        ...new Set([
          ...inTemplate,
          ...[input.bos_token, input.eos_token].filter(
            (token): token is string =>
              token !== undefined && options.controlTokens.includes(token),
          ),
        ]),
      ];
      const markToken = (token: string | undefined) =>
        token !== undefined && tokens.includes(token)
          ? `${marker}${tokens.indexOf(token)}${marker}`
          : token;
      const withMarkers = run(
        markedFor(marker, tokens),
        variables(markToken(input.bos_token), markToken(input.eos_token)),
        now,
      );
      const segments = split(withMarkers, marker, tokens);
      if (segments.map((segment) => segment.text).join("") !== prompt) {
        if (
          untrusted.some((text) =>
            options.controlTokens.some((token) => token !== "" && text.includes(token)),
          )
        ) {
          throw new ServiceError(
            400,
            "invalid_request",
            "The chat template reads control-token text inside the messages; remove it",
            { field: "messages" },
          );
        }
        throw new Error("The chat template's markup could not be told apart from its messages");
      }
      return segments;
    },
  };
}

/** The strings a tokenizer's added tokens spell that count as control markup: all of them
 * except pure whitespace (Gemma 3 adds runs of "\n", "\t" and "▁" as tokens; a message
 * full of newlines is not an injection). */
export function controlTokensFrom(addedTokens: readonly string[]): string[] {
  return addedTokens.filter((token) => token !== "" && !/^[\s▁]+$/u.test(token));
}

/** Token-like strings in a template's source (<…>, <|…|>, <｜…｜>, […]): its likely markup. */
export function templateMarkupCandidates(source: string): string[] {
  return [...new Set(source.match(/<[^<>\s]{1,64}>|\[[^[\]\s]{1,64}\]/gu) ?? [])];
}

const compiledTemplates = memoMap<string, ChatTemplate>("chat.templates");

/** CONTRACTS.md's renderChat. Without options, the control tokens are the template's
 * token-like strings and bos/eos (prefer chatMarkup + encodeChat from
 * chat-template-encode.ts, which checks them against the tokenizer). Compiled templates
 * are cached by source. */
export function renderChat(
  template: string,
  input: ChatTemplateInput,
  options?: ChatTemplateOptions,
): ChatSegment[] {
  const controlTokens = options?.controlTokens ?? [
    ...templateMarkupCandidates(template),
    ...[input.bos_token, input.eos_token].filter(
      (token): token is string => token !== undefined && token !== "",
    ),
  ];
  const key = `${template}\u0000${controlTokens.join("\u0000")}`;
  let compiled = options?.now === undefined ? compiledTemplates.get(key) : undefined;
  if (compiled === undefined) {
    compiled = compileChatTemplate(template, { ...options, controlTokens });
    if (options?.now === undefined) {
      if (compiledTemplates.size >= 32) compiledTemplates.clear();
      compiledTemplates.set(key, compiled);
    }
  }
  return compiled.render(input);
}

/** The prompt text of segments. */
export function promptText(segments: readonly ChatSegment[]): string {
  return segments.map((segment) => segment.text).join("");
}

function tokenPattern(tokens: readonly string[]): RegExp | undefined {
  if (tokens.length === 0) return undefined;
  const longestFirst = [...tokens].sort((a, b) => b.length - a.length);
  return new RegExp(longestFirst.map(escapeRegExp).join("|"), "g");
}

function run(program: Program, variables: Record<string, TemplateValue>, now: () => Date): string {
  try {
    const result = new Interpreter(createEnvironment(variables, now)).run(program);
    return String(result.value);
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    const detail =
      error instanceof TemplateRaise
        ? reason
        : `The chat template cannot render these messages: ${reason}`;
    throw new ServiceError(400, "invalid_request", detail, { field: "messages", cause: error });
  }
}

function split(rendered: string, marker: string, tokens: readonly string[]): ChatSegment[] {
  const segments: ChatSegment[] = [];
  const push = (text: string, trusted: boolean) => {
    if (text === "") return;
    const last = segments.at(-1);
    if (last !== undefined && last.trusted === trusted) last.text += text;
    else segments.push({ text, trusted });
  };
  const pattern = new RegExp(`${escapeRegExp(marker)}(\\d+)${escapeRegExp(marker)}`, "g");
  let at = 0;
  for (const match of rendered.matchAll(pattern)) {
    push(rendered.slice(at, match.index), false);
    push(tokens[Number(match[1])] ?? "", true);
    at = match.index + match[0].length;
  }
  push(rendered.slice(at), false);
  return segments;
}
