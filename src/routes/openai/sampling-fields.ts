// The sampling and limit fields both generation endpoints share (vLLM's names where OpenAI has
// none), each honoured, accepted at its neutral value, or refused with a 400 naming it.
import { z } from "@hono/zod-openapi";
import { integerList } from "../http/integer-list";
import { neutral, refused } from "./field-policies";
import { ResponseFormat, StructuredOutputsField } from "./structured-fields";

/** Most entries a logit_bias may have (OpenAI documents none; vLLM none either). */
const MAX_LOGIT_BIAS = 1024;

/**
 * Most choices one request may ask for. Each choice is a generation of its own (one origin
 * stream, as vLLM fans `n` out into child requests), and a Worker invocation holds at most
 * six connections open at once: more streams would queue behind the first six.
 */
const MAX_CHOICES = 6;
/** Most generations one request streams at once (prompts × n): the connections it may hold open. */
export const MAX_STREAMS = MAX_CHOICES;

const Stop = z.union([z.string().max(256), z.array(z.string().max(256)).max(16)]);
export const MAX_TOKEN_ID = 2 ** 31 - 1;
/** Most ids allowed_token_ids may list (vLLM sets none; a vocabulary's worth is plenty). */
const MAX_ALLOWED_IDS = 65_536;

/** Sampling and limits shared by both endpoints (vLLM's names where OpenAI has none). */
export const samplingFields = {
  model: z.string().min(1).openapi({ example: "tiny-llm" }),
  max_tokens: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .nullish()
    .openapi({ description: "Most tokens to generate" }),
  temperature: z
    .number()
    .min(0)
    .max(2)
    .nullish()
    .openapi({ description: "0 = greedy (ties: lowest id)" }),
  top_p: z.number().gt(0).max(1).nullish(),
  top_k: z
    .number()
    .int()
    .min(-1)
    .max(1_000_000)
    .nullish()
    .openapi({ description: "vLLM: -1 or 0 = off" }),
  min_p: z.number().min(0).max(1).nullish(),
  seed: z
    .number()
    .int()
    .min(Number.MIN_SAFE_INTEGER)
    .max(Number.MAX_SAFE_INTEGER)
    .nullish()
    .openapi({ description: "Same seed, same text" }),
  stop: Stop.nullish().openapi({
    description: "Up to 16 strings; matched at the edge across token boundaries, never sent",
  }),
  stream: z.boolean().nullish(),
  stream_options: z
    .object({
      include_usage: z.boolean().nullish(),
      continuous_usage_stats: z
        .boolean()
        .nullish()
        .openapi({
          description:
            "vLLM: with include_usage, every chunk carries the usage so far (the prompt's " +
            "tokens, the choice's tokens)",
        }),
      // OpenAI's stream obfuscation (random padding on each delta against size side channels) is
      // not done here.
      include_obfuscation: neutral(z.literal(false), "false"),
    })
    .strict()
    .nullish()
    .openapi({
      description:
        "include_usage: a last chunk with the usage; vLLM's continuous_usage_stats: the usage " +
        "so far on every chunk too; OpenAI's include_obfuscation (padded deltas) only at false",
    }),
  user: z.string().max(256).nullish(),
  n: z
    .number()
    .int()
    .min(1)
    .max(MAX_CHOICES)
    .nullish()
    .openapi({
      description:
        `Choices to generate for the prompt (1–${MAX_CHOICES}); with a seed, choice i is sampled ` +
        "with seed + i, as vLLM's",
    }),
  best_of: neutral(z.literal(1), "1"),
  // Applied at the sampler, edge or origin, as vLLM applies them
  // (src/generation/logit-processors.ts).
  presence_penalty: z
    .number()
    .min(-2)
    .max(2)
    .nullish()
    .openapi({ description: "Subtracted once from the logit of every token generated so far" }),
  frequency_penalty: z.number().min(-2).max(2).nullish().openapi({
    description: "Subtracted from the logit of every token generated so far, times its count",
  }),
  repetition_penalty: z
    .number()
    .gt(0)
    .max(1_000)
    .nullish()
    .openapi({
      description:
        "vLLM: tokens of the prompt and the output so far have a logit > 0 divided by it, others " +
        "multiplied (1 = off)",
    }),
  logit_bias: z
    .record(
      z.string().regex(/^(0|[1-9]\d{0,9})$/, "keys are token ids (decimal integers)"),
      z.number().min(-100).max(100),
    )
    .refine(
      (bias) => Object.keys(bias).length <= MAX_LOGIT_BIAS,
      `at most ${MAX_LOGIT_BIAS} token ids`,
    )
    .nullish()
    .openapi({
      maxProperties: MAX_LOGIT_BIAS,
      description:
        "Token id → bias (-100 to 100) added to its logit before sampling; -100 bans it, 100 " +
        "all but forces it",
    }),
  service_tier: neutral(z.enum(["auto", "default"]), '"auto"'),
  store: neutral(z.literal(false), "false"),
  metadata: refused("metadata"),
  // vLLM's extra sampling parameters (vllm/entrypoints/openai/protocol.py), as benchmark
  // clients send them (`vllm bench serve --ignore-eos`, genai-perf's min_tokens).
  ignore_eos: z.boolean().nullish().openapi({
    description:
      "vLLM: keep generating after the model's end-of-sequence token (stop_token_ids still stop)",
  }),
  min_tokens: z.number().int().min(0).max(1_000_000).nullish().openapi({
    description:
      "vLLM: no stop token id is sampled, and no stop string counts, before this many tokens",
  }),
  stop_token_ids: integerList(0, MAX_TOKEN_ID).max(64).nullish().openapi({
    description: "vLLM: token ids that end generation (finish_reason stop; not part of the text)",
  }),
  allowed_token_ids: integerList(0, MAX_TOKEN_ID)
    .min(1, "allowed_token_ids must not be empty")
    .max(MAX_ALLOWED_IDS)
    .nullish()
    .openapi({
      description:
        `vLLM: only these token ids can be generated (1–${MAX_ALLOWED_IDS} ids; the model's ` +
        "end-of-sequence only if listed)",
    }),
  include_stop_str_in_output: z.boolean().nullish().openapi({
    description: "vLLM: a matched stop string ends the text instead of being cut from it",
  }),
  truncate_prompt_tokens: z
    .number()
    .int()
    .min(-1)
    .max(1_000_000)
    .refine(
      (value) => value !== 0,
      "0 would leave no prompt: -1 (the context's length) or a count from 1",
    )
    .nullish()
    .openapi({
      description:
        "vLLM: keep only the prompt's last this many tokens (after the chat template); -1: as " +
        "many as the context holds",
    }),
  return_token_ids: z
    .boolean()
    .nullish()
    .openapi({
      description:
        "vLLM: the answer carries the prompt's token ids (prompt_token_ids) and each choice's " +
        "generated ids (token_ids, per chunk when streamed)",
    }),
  skip_special_tokens: neutral(z.literal(true), "true"),
  // Structured outputs (src/routes/openai/structured-fields.ts): enforced at the sampler, edge or
  // origin.
  response_format: ResponseFormat,
  structured_outputs: StructuredOutputsField,
};
