// A prompt as token ids: the chat template rendered (continue_final_message kept open), ids
// checked against the vocabulary, or text encoded; then truncated as asked and held to the context.
import { ServiceError } from "../../errors/service-error";
import type { TextGenerationManifest } from "../../models/manifest";
import { renderChat, type ChatSegment } from "../../tokenizers/chat-template";
import type { TextTokenizer } from "../../tokenizers/tokenizer";
import type { PromptInput } from "./generation-contract";

/**
 * vLLM's continue_final_message, as transformers renders it (huggingface/transformers
 * src/transformers/utils/chat_template_utils.py, render_jinja_template): the rendering is cut
 * right after the last occurrence of the final message's text, so whatever the template
 * writes after it (its end-of-turn) is gone and the model continues the message.
 */
function openFinalMessage(segments: readonly ChatSegment[], final: string): ChatSegment[] {
  const rendered = segments.map((segment) => segment.text).join("");
  const stripped = final.trim();
  const at = rendered.lastIndexOf(stripped);
  if (at === -1) {
    throw new ServiceError(
      400,
      "invalid_request",
      "continue_final_message: the final message does not appear in the chat after applying " +
        "the chat template",
      { field: "messages" },
    );
  }
  // The template kept the message's spacing (or it has none): cut after it; else after its stripped
  // text.
  const leftTrimmed = final.trimStart().length;
  const end =
    rendered.slice(at, at + leftTrimmed) === final ? at + leftTrimmed : at + stripped.length;
  const kept: ChatSegment[] = [];
  let offset = 0;
  for (const segment of segments) {
    if (offset >= end) break;
    kept.push(
      offset + segment.text.length <= end
        ? segment
        : { ...segment, text: segment.text.slice(0, end - offset) },
    );
    offset += segment.text.length;
  }
  return kept;
}

function contextExceeded(detail: string, field: string): ServiceError {
  return new ServiceError(400, "context_length_exceeded", detail, { field });
}

/** The prompt's token ids, or the 400/422 that says why it cannot be run. */
export function promptTokenIds(
  config: TextGenerationManifest["generation"],
  text: TextTokenizer,
  input: PromptInput,
  maxTokens: number | undefined,
  truncate: number | undefined,
): number[] {
  const special = (id: number | undefined) => (id === undefined ? undefined : text.decode([id]));
  let ids: number[];
  let field: string;
  if ("promptIds" in input) {
    field = input.field ?? "prompt";
    ids = [...input.promptIds];
    const outside = ids.findIndex((id) => id >= config.vocabSize);
    if (outside !== -1) {
      throw new ServiceError(
        422,
        "unprocessable_input",
        `Token id ${ids[outside]} is outside the vocabulary (size ${config.vocabSize})`,
        { field: `${field}.${outside}` },
      );
    }
  } else if ("messages" in input) {
    field = "messages";
    const rendered = renderChat(config.chatTemplate, {
      messages: input.messages,
      ...(input.tools === undefined ? {} : { tools: input.tools }),
      add_generation_prompt: input.addGenerationPrompt ?? true,
      bos_token: special(config.bosTokenId),
      eos_token: special(config.eosTokenId),
      ...(input.kwargs === undefined ? {} : { kwargs: input.kwargs }),
    });
    const segments = input.continueFinalMessage
      ? openFinalMessage(rendered, String(input.messages.at(-1)?.content ?? ""))
      : rendered;
    ids = segments.flatMap((segment) =>
      text.encode(segment.text, { parseSpecialTokens: segment.trusted }),
    );
  } else {
    field = input.field ?? "prompt";
    ids = text.encode(input.prompt);
    if (config.addBosToken && config.bosTokenId !== undefined) ids.unshift(config.bosTokenId);
  }
  if (ids.length === 0)
    throw new ServiceError(400, "invalid_request", `${field}: the prompt has no tokens`, {
      field,
    });
  const context = config.contextLength;
  if (truncate !== undefined) {
    // As vLLM's (vllm/entrypoints/openai/serving_engine.py): the left side goes, the end of the
    // prompt stays.
    if (truncate > context) {
      throw new ServiceError(
        400,
        "invalid_request",
        `truncate_prompt_tokens value (${truncate}) is greater than max_model_len ` +
          `(${context}). Please, select a smaller truncation size.`,
        { field: "truncate_prompt_tokens" },
      );
    }
    const keep = truncate === -1 ? context : truncate;
    if (ids.length > keep) ids = ids.slice(ids.length - keep);
  }
  if (ids.length >= context) {
    throw contextExceeded(
      `This model's maximum context length is ${context} tokens. However, your ${field} ` +
        `resulted in ${ids.length} tokens.`,
      field,
    );
  }
  if (maxTokens !== undefined && ids.length + maxTokens > context) {
    throw contextExceeded(
      `This model's maximum context length is ${context} tokens. However, you requested ` +
        `${ids.length + maxTokens} tokens (${ids.length} in the ${field}, ${maxTokens} in the ` +
        "completion).",
      "max_tokens",
    );
  }
  return ids;
}
