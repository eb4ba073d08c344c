// Tokenization as a service of its own (vLLM's /tokenize and /detokenize) for any model whose
// manifest names a tokenizer, with its chat template when it has one.
import { z } from "zod";
import { ServiceError } from "../errors/service-error";
import type { RegisteredModel } from "./registered-model";
import {
  compileChatTemplate,
  type ChatTemplate,
  type ChatTemplateInput,
} from "../tokenizers/chat-template";
import { chatMarkup, encodeChat, type ChatMarkup } from "../tokenizers/chat-template-encode";
import type { TextTokenizer } from "../tokenizers/tokenizer";
import { modelTokenizer } from "./model-tokenizer";

/** What tokenization reads from any manifest: read loosely, so every task's manifest fits. */
const TokenizerViewSchema = z.object({
  tokenizer: z
    .object({
      file: z.string().min(1),
      sha256: z.string(),
      maxLength: z.number().int().positive().optional(),
    })
    .loose(),
  generation: z
    .object({
      contextLength: z.number().int().positive().optional(),
      chatTemplate: z.string().optional(),
      bosTokenId: z.number().int().min(0).optional(),
      eosTokenId: z.number().int().min(0).optional(),
    })
    .loose()
    .optional(),
});

export interface ChatRequest {
  messages: ChatTemplateInput["messages"];
  tools?: ChatTemplateInput["tools"];
  addGenerationPrompt: boolean;
  kwargs?: ChatTemplateInput["kwargs"];
}

export interface Tokenization {
  /** The context length vLLM reports as max_model_len. */
  readonly maxModelLen: number;
  readonly hasChatTemplate: boolean;
  tokenize(prompt: string, addSpecialTokens: boolean): Promise<number[]>;
  /** Renders the chat template and encodes it; template markup only becomes control ids. */
  tokenizeChat(request: ChatRequest, addSpecialTokens: boolean): Promise<number[]>;
  /** Ids outside the vocabulary are a 422 naming `tokens.<index>`. */
  detokenize(tokens: readonly number[]): Promise<string>;
}

interface Loaded {
  tokenizer: TextTokenizer;
  template: { render: ChatTemplate["render"]; markup: ChatMarkup } | undefined;
  bosToken: string | undefined;
  eosToken: string | undefined;
  specials: [number[], number[]];
}

/**
 * The model's tokenization service, or undefined when its manifest names no tokenizer.
 *
 * Chat prompts are encoded segment by segment so that only the template's markup becomes control
 * ids (src/tokenizers/chat-template.ts).
 */
export function createTokenization(
  model: Pick<RegisteredModel, "manifest" | "readFile">,
): Tokenization | undefined {
  const view = TokenizerViewSchema.safeParse(model.manifest);
  if (!view.success) return undefined;
  const { tokenizer: spec, generation } = view.data;
  const chatTemplate = generation?.chatTemplate;
  let loading: Promise<Loaded> | undefined;

  const load = (): Promise<Loaded> => {
    if (loading === undefined) {
      const attempt = modelTokenizer(model, spec).then((tokenizer): Loaded => {
        const tokenOf = (id: number | undefined) =>
          id === undefined ? undefined : tokenizer.decode([id]);
        const [bosToken, eosToken] = [
          tokenOf(generation?.bosTokenId),
          tokenOf(generation?.eosTokenId),
        ];
        let template: Loaded["template"];
        if (chatTemplate !== undefined) {
          const markup = chatMarkup(tokenizer, chatTemplate, [bosToken, eosToken]);
          const compiled = compileChatTemplate(chatTemplate, { controlTokens: markup.tokens });
          template = { render: (input) => compiled.render(input), markup };
        }
        const bare = tokenizer.encode("a");
        const wrapped = tokenizer.encode("a", { addSpecialTokens: true });
        const at = wrapped.findIndex((_, index) =>
          bare.every((id, offset) => wrapped[index + offset] === id),
        );
        const specials: [number[], number[]] =
          at === -1 ? [[], []] : [wrapped.slice(0, at), wrapped.slice(at + bare.length)];
        return { tokenizer, template, bosToken, eosToken, specials };
      });
      attempt.catch(() => {
        if (loading === attempt) loading = undefined;
      });
      loading = attempt;
    }
    return loading.catch((error: unknown) => {
      throw new ServiceError(
        503,
        "model_not_ready",
        `The tokenizer of "${model.manifest.name}" could not be loaded`,
        { cause: error, headers: { "retry-after": "5" } },
      );
    });
  };

  return {
    maxModelLen: generation?.contextLength ?? spec.maxLength ?? 0,
    hasChatTemplate: chatTemplate !== undefined,
    async tokenize(prompt, addSpecialTokens) {
      const { tokenizer } = await load();
      return tokenizer.encode(prompt, { addSpecialTokens });
    },
    async tokenizeChat(request, addSpecialTokens) {
      const { tokenizer, template, bosToken, eosToken, specials } = await load();
      if (template === undefined) {
        throw new ServiceError(
          400,
          "invalid_request",
          `Model "${model.manifest.name}" has no chat template: send a prompt instead of messages`,
          { field: "messages" },
        );
      }
      const segments = template.render({
        messages: request.messages,
        tools: request.tools ?? null,
        add_generation_prompt: request.addGenerationPrompt,
        bos_token: bosToken,
        eos_token: eosToken,
        kwargs: request.kwargs,
      });
      const ids = encodeChat(tokenizer, segments, template.markup);
      return addSpecialTokens ? [...specials[0], ...ids, ...specials[1]] : ids;
    },
    async detokenize(tokens) {
      const { tokenizer } = await load();
      const outside = tokens.findIndex((id) => id >= tokenizer.vocabSize);
      if (outside !== -1) {
        throw new ServiceError(
          422,
          "unprocessable_input",
          `Token id ${tokens[outside]} is outside the vocabulary (size ${tokenizer.vocabSize})`,
          {
            field: `tokens.${outside}`,
          },
        );
      }
      return tokenizer.decode(tokens);
    },
  };
}
