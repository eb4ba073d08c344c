// Text generation: chat template → tokenize → the generation capability (in this isolate or on a
// vLLM origin) → incremental detokenization → stop strings → text deltas.
import { ServiceError } from "../../errors/service-error";
import type { TextGenerationManifest } from "../../models/manifest";
import type { RegisteredModel } from "../registered-model";
import type { FinishReason, GenerationCapability, TokenLogprob } from "../../runtime";
import { streamDetokenizer } from "../../tokenizers/stream-detokenizer";
import type { TextTokenizer } from "../../tokenizers/tokenizer";
import { stopMatcher } from "./stop-strings";
import { modelTokenizer } from "../model-tokenizer";
import { recordFirstToken, recordTokens } from "../metrics/edge-metrics";
import { logprobNamer, promptLogprobNamer, type TokenLogprobs } from "./token-names";
import type { TextGenerator, Usage } from "./generation-contract";
import { promptTokenIds } from "./prompt-tokens";
import { structuredConstraint } from "./structured-constraint";

export type { PromptTokenLogprobs, TokenLogprobs, TokenText } from "./token-names";
export type {
  GenerationOptions,
  PreparedPrompt,
  PromptInput,
  TextEvent,
  TextGenerator,
  Usage,
} from "./generation-contract";

/**
 * A matched stop string, or the consumer leaving, aborts the generation behind it.
 */
export function createTextGenerator(
  model: RegisteredModel & { manifest: TextGenerationManifest },
): TextGenerator {
  const { manifest, runtime } = model;
  const config = manifest.generation;
  const getTokenizer = (): Promise<TextTokenizer> => modelTokenizer(model, manifest.tokenizer);
  const generation = (): GenerationCapability => {
    if (runtime.generation === undefined)
      throw new Error(`Model ${manifest.name}: its runtime offers no generation`);
    return runtime.generation;
  };
  const modelStopIds = [config.eosTokenId, ...config.stopTokenIds];

  return {
    manifest,
    async load() {
      await Promise.all([getTokenizer(), runtime.load()]);
    },
    async prepare(input, maxTokens, truncate) {
      const text = await getTokenizer();
      return { ids: promptTokenIds(config, text, input, maxTokens, truncate) };
    },
    async *generate(prompt, options, signal) {
      // Checked here, where the vocabulary is known, before any event (so a plain HTTP error).
      const biased = options.sampling.logitBias?.find(([id]) => id >= config.vocabSize);
      if (biased !== undefined) {
        throw new ServiceError(
          422,
          "unprocessable_input",
          `Token id ${biased[0]} is outside the vocabulary (size ${config.vocabSize})`,
          { field: `logit_bias.${biased[0]}` },
        );
      }
      const outside =
        options.sampling.allowedTokenIds?.findIndex((id) => id >= config.vocabSize) ?? -1;
      if (outside !== -1) {
        throw new ServiceError(
          422,
          "unprocessable_input",
          `Token id ${options.sampling.allowedTokenIds![outside]} is outside the vocabulary ` +
            `(size ${config.vocabSize})`,
          { field: `allowed_token_ids.${outside}` },
        );
      }
      const text = await getTokenizer();
      const begun = performance.now();
      const stopped = new AbortController();
      const combined = AbortSignal.any([signal, stopped.signal]);
      const detokenizer = streamDetokenizer(text, {
        skipSpecialTokens: options.skipSpecialTokens ?? true,
      });
      const matcher = stopMatcher(options.stop, { include: options.includeStopString ?? false });
      const maxTokens = options.maxTokens ?? config.contextLength - prompt.ids.length;
      const minTokens = Math.min(options.minTokens ?? 0, maxTokens);
      // As vLLM: with ignore_eos the model's end-of-sequence ids stop nothing; the client's stop
      // ids still do.
      const stopTokenIds = [
        ...new Set([...(options.ignoreEos ? [] : modelStopIds), ...(options.stopTokenIds ?? [])]),
      ];
      let completionTokens = 0;
      let finishReason: FinishReason = "length";
      let stopReason: number | null = null;
      let cachedTokens: number | undefined;
      const usage = (): Usage => ({
        prompt_tokens: prompt.ids.length,
        completion_tokens: completionTokens,
        total_tokens: prompt.ids.length + completionTokens,
        ...(cachedTokens === undefined
          ? {}
          : { prompt_tokens_details: { cached_tokens: cachedTokens } }),
      });
      const steps = generation().generate(
        {
          promptIds: prompt.ids,
          maxTokens,
          sampling: options.sampling,
          stopTokenIds,
          minTokens,
          ignoreEos: options.ignoreEos ?? false,
          ...(options.keyId === undefined ? {} : { keyId: options.keyId }),
          ...(options.conversationKey === undefined
            ? {}
            : { conversationKey: options.conversationKey }),
          ...(options.logprobs === undefined ? {} : { logprobs: options.logprobs }),
          ...(options.promptLogprobs === undefined
            ? {}
            : { promptLogprobs: options.promptLogprobs }),
          ...(options.structured === undefined
            ? {}
            : {
                structured: structuredConstraint(
                  options.structured.spec,
                  options.structured.field,
                  text,
                  config.vocabSize,
                ),
              }),
        },
        combined,
      );
      const nameLogprobs = options.logprobs === undefined ? undefined : logprobNamer(text);
      const namePrompt =
        options.promptLogprobs === undefined ? undefined : promptLogprobNamer(text);
      /** The step's logprobs as tokens: its ids, then its stop id. */
      const logprobsOf = (
        ids: readonly number[],
        stopId: number | undefined,
        logprobs: readonly TokenLogprob[] | undefined,
      ): TokenLogprobs[] | undefined => {
        if (nameLogprobs === undefined || logprobs === undefined) return undefined;
        const named = ids.map((id, i) => nameLogprobs(logprobs[i]!, id));
        if (stopId !== undefined && logprobs[ids.length] !== undefined)
          named.push(nameLogprobs(logprobs[ids.length]!, stopId));
        return named;
      };
      let started = false;
      /**
       * The generation ended by itself (its finish was read): nothing behind it is left to stop.
       */
      let ended = false;
      try {
        for await (const step of steps) {
          if (
            step.tokenIds.length === 0 &&
            step.finishReason === undefined &&
            step.stopTokenId === undefined
          ) {
            if (!started)
              yield step.modelVersion === undefined
                ? { type: "accepted" }
                : { type: "accepted", modelVersion: step.modelVersion };
            started = true;
            continue;
          }
          started = true;
          if (
            completionTokens === 0 &&
            (step.tokenIds.length > 0 || step.stopTokenId !== undefined)
          )
            recordFirstToken(manifest.name, (performance.now() - begun) / 1000);
          if (step.promptLogprobs !== undefined && namePrompt !== undefined)
            yield { type: "prompt", logprobs: namePrompt(step.promptLogprobs, prompt.ids) };
          // vLLM's min_tokens (vllm/v1/engine/detokenizer.py): the text of the first minTokens
          // tokens is passed over by the stop-string search; a stop string that ends after it
          // counts.
          const unchecked = Math.max(
            0,
            Math.min(step.tokenIds.length, minTokens - completionTokens),
          );
          completionTokens += step.tokenIds.length + (step.stopTokenId === undefined ? 0 : 1);
          const passed =
            unchecked > 0
              ? matcher.push(detokenizer.push(step.tokenIds.slice(0, unchecked)), { search: false })
                  .text
              : "";
          const match = matcher.push(
            detokenizer.push(unchecked > 0 ? step.tokenIds.slice(unchecked) : step.tokenIds),
          );
          const text = passed + match.text;
          const logprobs = logprobsOf(step.tokenIds, step.stopTokenId, step.logprobs);
          const tokenIds = options.tokenIds
            ? step.stopTokenId === undefined
              ? [...step.tokenIds]
              : [...step.tokenIds, step.stopTokenId]
            : undefined;
          if (tokenIds !== undefined && tokenIds.length > 0)
            yield { type: "text", text, tokenIds, ...(logprobs === undefined ? {} : { logprobs }) };
          else if (logprobs !== undefined && logprobs.length > 0)
            yield { type: "text", text, logprobs };
          else if (text !== "") yield { type: "text", text };
          if (match.stop !== undefined) {
            // The origin stops decoding: its request is aborted now, not when max_tokens runs out.
            stopped.abort(new DOMException("stop string matched", "AbortError"));
            yield { type: "done", finishReason: "stop", stopReason: match.stop, usage: usage() };
            return;
          }
          if (step.finishReason !== undefined) {
            finishReason = step.finishReason;
            cachedTokens = step.cachedTokens;
            ended = true;
            if (step.stopTokenId !== undefined && step.stopTokenId !== config.eosTokenId)
              stopReason = step.stopTokenId;
            break;
          }
        }
      } finally {
        // Anything else (the consumer leaving, an error) stops the generation behind it.
        if (!ended) stopped.abort(new DOMException("generation ended", "AbortError"));
        if (started) {
          options.onUsage?.(usage());
          recordTokens(manifest.name, prompt.ids.length, completionTokens);
        }
      }
      const tail = matcher.push(detokenizer.flush(), { search: completionTokens > minTokens });
      const rest = tail.text + (tail.stop === undefined ? matcher.flush() : "");
      if (rest !== "") yield { type: "text", text: rest };
      yield tail.stop === undefined
        ? { type: "done", finishReason, stopReason, usage: usage() }
        : { type: "done", finishReason: "stop", stopReason: tail.stop, usage: usage() };
    },
  };
}
