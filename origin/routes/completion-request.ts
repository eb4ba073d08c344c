// The subset of vLLM's CompletionRequest the origin serves, and its translation into the engine's
// GenerationParams.
import { z } from "zod";
import { ServiceError } from "../../src/errors/service-error";
import { MAX_LOGPROBS } from "../../src/generation/logprobs";
import type { SamplingParams } from "../../src/generation/sampling-params";
import type { GenerationParams } from "../engines/decoder/generation-params";
import type { GenerationConfig } from "../manifests";
import {
  ResponseFormatSchema,
  StructuredOutputsSchema,
  structuredOutputsOf,
} from "./structured-request";

const TokenId = z.number().int().min(0);
const LONG = 2 ** 63;

/**
 * The subset of vLLM's CompletionRequest the origin serves: the prompt as token ids and vLLM's
 * sampling fields, names and defaults as in vllm-project/vllm vllm/entrypoints/openai/protocol.py
 * (CompletionRequest; _DEFAULT_SAMPLING_PARAMS: temperature 1, top_p 1, top_k 0 = off, min_p 0,
 * penalties 0 / 0 / 1; max_tokens 16; allowed_token_ids). Unknown fields are ignored as vLLM
 * ignores them; fields this origin cannot honour are refused by name when they carry a non-neutral
 * value (text prompts and stop strings need a tokenizer, which lives at the edge). `logprobs` is
 * served (completion-logprobs.ts), up to vLLM's default max_logprobs of 20; its tokens are always
 * "token_id:N", whatever
 * `return_tokens_as_token_ids` says, as this origin keeps no tokenizer. `echo` is served as
 * vLLM serves it with token-id prompts (completions.ts): with `logprobs`, the prompt's own logprobs
 * too (CompletionRequest.to_sampling_params: prompt_logprobs = logprobs). vLLM's prompt-only echo
 * (`max_tokens: 0`) is not: max_tokens stays at least 1, as the edge sends it.
 * `response_format` and `structured_outputs` are served as structured-request.ts reads them; the
 * legacy guided_* fields (gone from vLLM's request) stay refused rather than silently ignored.
 */
export const CompletionRequestSchema = z
  .object({
    model: z.string().min(1).optional(),
    prompt: z.union([z.array(TokenId).min(1), z.array(z.array(TokenId).min(1)).length(1)]),
    max_tokens: z.number().int().min(1).nullable().default(16),
    temperature: z.number().min(0).nullable().optional(),
    top_p: z.number().gt(0).max(1).nullable().optional(),
    top_k: z.number().int().min(-1).nullable().optional(),
    min_p: z.number().min(0).max(1).nullable().optional(),
    // Ranges as vLLM's SamplingParams._verify_args (vllm/sampling_params.py).
    presence_penalty: z.number().min(-2).max(2).nullable().optional(),
    frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
    repetition_penalty: z.number().gt(0).nullable().optional(),
    logit_bias: z.record(z.string(), z.number()).nullable().optional(),
    allowed_token_ids: z.array(z.number().int()).nullable().optional(),
    seed: z.number().int().min(-LONG).max(LONG).nullable().optional(),
    stop_token_ids: z.array(TokenId).nullable().optional(),
    ignore_eos: z.boolean().default(false),
    min_tokens: z.number().int().min(0).default(0),
    // This origin's extension (src/protocols/vllm-completions.ts OUTPUT_PREFIX_HEADER).
    output_prefix_tokens: z.number().int().min(0).default(0),
    stream: z.boolean().nullable().default(false),
    stream_options: z
      .object({
        include_usage: z.boolean().nullable().default(true),
        continuous_usage_stats: z.boolean().nullable().default(false),
      })
      .loose()
      .nullable()
      .optional(),
    return_token_ids: z.boolean().nullable().default(false),
    echo: z.boolean().nullable().default(false),
    // vLLM's `int | None`, read by pydantic in lax mode (false is 0, true is 1); check_logprobs
    // refuses < 0.
    logprobs: z
      .union([
        z.number().int().min(0, "`logprobs` must be a positive value."),
        z.boolean().transform(Number),
      ])
      .nullable()
      .optional(),
    return_tokens_as_token_ids: z.boolean().nullable().optional(),
    skip_special_tokens: z.boolean().default(true),
    detokenize: z.boolean().default(true),
    response_format: ResponseFormatSchema.nullable().optional(),
    structured_outputs: StructuredOutputsSchema.nullable().optional(),
  })
  .loose();

export type CompletionRequest = z.output<typeof CompletionRequestSchema>;

/** Fields refused unless neutral: [name, is the value neutral]. */
const REFUSED: ReadonlyArray<[string, (value: unknown) => boolean]> = [
  ["n", (v) => v === 1],
  ["best_of", (v) => v === 1],
  ["prompt_logprobs", (v) => v === 0],
  ["stop", (v) => (Array.isArray(v) && v.length === 0) || v === ""],
  ["suffix", (v) => v === ""],
  ["bad_words", (v) => Array.isArray(v) && v.length === 0],
  ["use_beam_search", (v) => v === false],
  ["guided_json", () => false],
  ["guided_regex", () => false],
  ["guided_choice", () => false],
  ["guided_grammar", () => false],
];

const badRequest = (field: string, message: string) =>
  new ServiceError(400, "invalid_request", message, { field });

/**
 * logit_bias as vLLM's SamplingParams.from_optional reads it (vllm/sampling_params.py): keys
 * are token ids as decimal strings, biases clamped to [-100, 100] (OpenAI's range), ids
 * outside the vocabulary refused.
 */
function logitBias(
  bias: Readonly<Record<string, number>>,
  vocabSize: number,
): Array<[number, number]> {
  return Object.entries(bias).map(([key, value]) => {
    const id = /^\s*[+-]?\d+\s*$/.test(key) ? Number(key) : Number.NaN;
    if (!Number.isSafeInteger(id))
      throw badRequest(
        "logit_bias",
        `logit_bias: ${JSON.stringify(key)} is not an integer token id`,
      );
    if (id < 0 || id >= vocabSize)
      throw badRequest(
        "logit_bias",
        `logit_bias: token id ${id} is outside the vocabulary (${vocabSize})`,
      );
    return [id, Math.min(100, Math.max(-100, value))];
  });
}

/** Checks a parsed request against the model and turns it into the engine's parameters. */
export function toGenerationParams(
  request: CompletionRequest,
  raw: Readonly<Record<string, unknown>>,
  generation: GenerationConfig,
): GenerationParams {
  for (const [name, neutral] of REFUSED) {
    const value = raw[name];
    if (value !== undefined && value !== null && !neutral(value))
      throw badRequest(name, `${name}: ${JSON.stringify(value)} is not supported by this origin`);
  }
  if (request.stream_options != null && request.stream !== true)
    throw badRequest("stream_options", "Stream options can only be defined when `stream=True`.");
  const promptIds = Array.isArray(request.prompt[0]) ? request.prompt[0] : request.prompt.flat();
  const outOfVocab = promptIds.findIndex((id) => id >= generation.vocabSize);
  if (outOfVocab !== -1)
    throw badRequest(
      `prompt.${outOfVocab}`,
      `prompt.${outOfVocab}: token id ${promptIds[outOfVocab]} ` +
        `is outside the vocabulary (${generation.vocabSize})`,
    );
  const stopBeyond = (request.stop_token_ids ?? []).find((id) => id >= generation.vocabSize);
  if (stopBeyond !== undefined)
    throw badRequest(
      "stop_token_ids",
      `stop_token_ids: ${stopBeyond} is outside the vocabulary (${generation.vocabSize})`,
    );

  const context = generation.contextLength;
  if (promptIds.length >= context) {
    throw badRequest(
      "prompt",
      `The prompt (total length ${promptIds.length}) is too ` +
        `long to fit into the model (context length ${context}).`,
    );
  }
  const maxTokens = request.max_tokens ?? context - promptIds.length;
  if (promptIds.length + maxTokens > context) {
    throw badRequest(
      "max_tokens",
      `This model's maximum context length is ${context} tokens. However, ` +
        `you requested ${promptIds.length + maxTokens} tokens ` +
        `(${promptIds.length} in the messages, ${maxTokens} in the ` +
        "completion). Please reduce the length of the messages or completion.",
    );
  }
  if (request.output_prefix_tokens >= promptIds.length)
    throw badRequest(
      "output_prefix_tokens",
      `output_prefix_tokens (${request.output_prefix_tokens}) must leave at least one prompt ` +
        `token of the ${promptIds.length}`,
    );
  if (request.min_tokens > maxTokens)
    throw badRequest(
      "min_tokens",
      "min_tokens must be less than or equal to " +
        `max_tokens=${maxTokens}, got ${request.min_tokens}.`,
    );
  // vLLM's checks (vllm/sampling_params.py SamplingParams._validate_allowed_token_ids), its
  // messages.
  const allowed = request.allowed_token_ids ?? undefined;
  if (allowed !== undefined && allowed.length === 0)
    throw badRequest("allowed_token_ids", "allowed_token_ids is not None and empty!");
  if (allowed?.some((id) => id < 0 || id >= generation.vocabSize))
    throw badRequest("allowed_token_ids", "allowed_token_ids contains out-of-vocab token id!");
  const topK = request.top_k ?? 0;
  const sampling: SamplingParams = {
    temperature: request.temperature ?? 1,
    topK: topK === -1 ? 0 : topK,
    topP: request.top_p ?? 1,
    minP: request.min_p ?? 0,
    presencePenalty: request.presence_penalty ?? 0,
    frequencyPenalty: request.frequency_penalty ?? 0,
    repetitionPenalty: request.repetition_penalty ?? 1,
    ...(request.logit_bias == null
      ? {}
      : { logitBias: logitBias(request.logit_bias, generation.vocabSize) }),
    ...(allowed === undefined ? {} : { allowedTokenIds: allowed }),
  };
  const logprobs = request.logprobs ?? undefined;
  // vLLM's check against its max_logprobs (vllm/sampling_params.py _validate_logprobs), default 20.
  if (logprobs !== undefined && logprobs > MAX_LOGPROBS)
    throw badRequest(
      "logprobs",
      `Requested sample logprobs of ${logprobs}, which ` +
        `is greater than max allowed: ${MAX_LOGPROBS}`,
    );
  // vLLM's to_sampling_params: an explicit prompt_logprobs (here only 0) wins over echo's
  // `logprobs`.
  const promptLogprobs =
    request.echo === true && logprobs !== undefined
      ? raw.prompt_logprobs === 0
        ? 0
        : logprobs
      : undefined;
  const structuredOutputs = structuredOutputsOf(
    request.structured_outputs,
    request.response_format,
  );
  const seed = request.seed ?? undefined;
  if (seed !== undefined && !Number.isSafeInteger(seed))
    throw badRequest("seed", "seed: this origin takes seeds within ±2^53");
  return {
    promptIds,
    maxTokens,
    minTokens: request.min_tokens,
    sampling,
    seed,
    stopTokenIds: request.stop_token_ids ?? [],
    ignoreEos: request.ignore_eos,
    ...(logprobs === undefined ? {} : { logprobs }),
    ...(promptLogprobs === undefined ? {} : { promptLogprobs }),
    ...(structuredOutputs === undefined ? {} : { structuredOutputs }),
    ...(request.output_prefix_tokens === 0
      ? {}
      : { outputPrefixTokens: request.output_prefix_tokens }),
  };
}
