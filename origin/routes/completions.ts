// vLLM's POST /v1/completions with token ids in and out, streamed (SSE) or not.
import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { toServiceError } from "../../src/errors/problem";
import {
  endpointLoadHeaders,
  LOAD_METRICS_FORMAT_HEADER,
} from "../../src/protocols/endpoint-load-metrics";
import { ServiceError } from "../../src/errors/service-error";
import { OUTPUT_PREFIX_HEADER } from "../../src/protocols/vllm-completions";
import type { OriginConfig } from "../config";
import type { TokenLogprob } from "../../src/generation/logprobs";
import type { GenerationStep } from "../engines/decoder/generation-params";
import { parseWith, readJsonBody } from "../http/body";
import type { Drain } from "../http/drain";
import { vllmErrorBody } from "../http/errors";
import { chunkWriter, promptDetails, usageOf } from "./completion-chunks";
import { completionLogprobs, echoedLogprobs } from "./completion-logprobs";
import type { HostedModel, ModelHost } from "../model-host";
import { CompletionRequestSchema, toGenerationParams } from "./completion-request";
import { GEN_AI, recordFirstToken, recordGeneration, spanOf, startGeneration } from "../tracing";

const encoder = new TextEncoder();
const frame = (value: unknown) =>
  encoder.encode(`data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`);

function generationModel(host: ModelHost, name: string | undefined): HostedModel {
  const models = [...host.models.values()].filter((model) => model.manifest.kind === "generation");
  if (name === undefined) {
    const [only] = models;
    if (only === undefined)
      throw new ServiceError(
        404,
        "model_not_found",
        "This origin serves no text-generation model",
        { field: "model" },
      );
    return only;
  }
  const model = host.find(name, "model");
  if (model.manifest.kind !== "generation")
    throw new ServiceError(
      400,
      "invalid_request",
      `Model "${name}" is not a text-generation model`,
      { field: "model" },
    );
  return model;
}

/**
 * vLLM's POST /v1/completions, token ids in and out, streamed (SSE) or not. Response
 * shapes follow vllm-project/vllm vllm/entrypoints/openai/serving_completion.py
 * (completion_stream_generator, request_output_to_completion_response) and protocol.py
 * (CompletionStreamResponse, CompletionResponse, UsageInfo): one chunk per token (or, as
 * with vLLM's --stream-interval N, the first token alone and then N tokens per chunk), the
 * prompt's ids on the first chunk, the finish on the last, a `choices: []` usage chunk
 * when stream_options.include_usage, then `data: [DONE]`. Text is "" (the edge
 * detokenizes). With `logprobs`, each choice carries vLLM's CompletionLogProbs for its tokens
 * (completion-logprobs.ts). With `echo` (lm-evaluation-harness's loglikelihood requests), the
 * choice's first chunk — or the whole choice — starts with the prompt: its ids lead the
 * logprobs' entries, the prompt's logprobs before the tokens' (the first prompt token's null),
 * and the first chunk carries `prompt_token_ids`; `token_ids` stay the generated ones and the
 * echoed text is "" (vLLM's with return_token_ids; this origin has no tokenizer). With
 * `response_format` or `structured_outputs` (structured-request.ts), the engine masks each
 * token to the constraint, reading the token bytes of the model's tokenizer file. A client
 * that disconnects aborts its request in the engine; one still running when a drain's grace
 * period ends gets a 503 (streamed: vLLM's error event, then [DONE]).
 */
export function completionRoutes(
  host: ModelHost,
  { maxBodyBytes, streamInterval }: Pick<OriginConfig, "maxBodyBytes" | "streamInterval">,
  drain: Drain,
): Hono {
  const app = new Hono();
  app.post("/v1/completions", async (c) => {
    // Tracing off: no span, and nothing more is done per token than a comparison.
    const span = spanOf(c.req.raw);
    const startedAt = span === undefined ? 0 : performance.now();
    const raw = await readJsonBody(c, maxBodyBytes);
    const request = parseWith(CompletionRequestSchema, raw);
    const model = generationModel(host, request.model);
    host.requireReady(model);
    const { decoder, manifest } = model;
    if (decoder === undefined || manifest.kind !== "generation")
      throw new ServiceError(503, "model_not_ready", "The decoder is not loaded");
    const params = toGenerationParams(
      request,
      typeof raw === "object" && raw !== null ? { ...raw } : {},
      manifest.generation,
    );
    // A continuation: the output so far it read as output, echoed for the edge to check.
    const n = params.outputPrefixTokens;
    const echoed: Record<string, string> = n ? { [OUTPUT_PREFIX_HEADER]: String(n) } : {};
    if (params.structuredOutputs !== undefined && !decoder.structuredOutputs) {
      throw new ServiceError(
        400,
        "invalid_request",
        `Model "${manifest.name}" cannot serve structured ` +
          "outputs: its tokenizer gives no token bytes",
        { field: "structured_outputs" },
      );
    }

    if (span !== undefined) {
      startGeneration(span, {
        operation: "text_completion",
        model: manifest.name,
        [GEN_AI.responseModel]: manifest.name,
        [GEN_AI.maxTokens]: params.maxTokens,
      });
    }
    const abort = new AbortController();
    c.req.raw.signal.addEventListener("abort", () => abort.abort(), { once: true });
    const generation = decoder.submit(params, AbortSignal.any([abort.signal, drain.expired]));
    /** A request the engine dropped because the drain's grace period ended (no finish step). */
    const cut = (last: GenerationStep | undefined) =>
      drain.expired.aborted && (last?.finishReason ?? null) === null;
    const head = {
      id: `cmpl-${randomUUID().replaceAll("-", "")}`,
      object: "text_completion" as const,
      created: Math.floor(Date.now() / 1000),
      model: manifest.name,
    };
    const withIds = request.return_token_ids === true;
    const promptIds = withIds ? [...params.promptIds] : null;
    const withLogprobs = params.logprobs !== undefined;
    const echo = request.echo === true;
    let promptLogprobs: Array<TokenLogprob | null> | undefined;

    if (request.stream !== true) {
      const ids: number[] = [];
      const logprobs: Array<TokenLogprob | undefined> = [];
      let last: GenerationStep | undefined;
      let cachedTokens = 0;
      for await (const step of generation.steps) {
        if (span !== undefined && ids.length === 0) recordFirstToken(span, startedAt);
        ids.push(step.tokenId);
        if (withLogprobs) logprobs.push(step.logprob);
        promptLogprobs ??= step.promptLogprobs;
        last = step;
        cachedTokens = step.cachedTokens ?? cachedTokens;
      }
      if (abort.signal.aborted)
        throw new ServiceError(400, "invalid_request", "Client disconnected");
      if (cut(last)) throw drain.error();
      if (span !== undefined) {
        recordGeneration(span, {
          inputTokens: params.promptIds.length,
          outputTokens: ids.length,
          finishReason: last?.finishReason,
          responseId: head.id,
        });
      }
      const choice = {
        index: 0,
        text: "",
        logprobs: withLogprobs
          ? echo
            ? echoedLogprobs(params.promptIds, promptLogprobs, ids, logprobs)
            : completionLogprobs(ids, logprobs)
          : null,
        finish_reason: last?.finishReason ?? null,
        stop_reason: last?.stopReason ?? null,
        prompt_logprobs: null,
        prompt_token_ids: promptIds,
        token_ids: withIds ? ids : null,
      };
      return c.json(
        {
          ...head,
          choices: [choice],
          service_tier: null,
          system_fingerprint: null,
          usage: {
            ...usageOf(params.promptIds.length, ids.length),
            prompt_tokens_details: promptDetails(cachedTokens),
          },
          kv_transfer_params: null,
        },
        200,
        echoed,
      );
    }

    const includeUsage = request.stream_options?.include_usage === true;
    const continuousUsage = request.stream_options?.continuous_usage_stats === true;
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        // After a disconnect the stream is cancelled: nothing more may be enqueued.
        const send = (value: unknown) => {
          if (!abort.signal.aborted) controller.enqueue(frame(value));
        };
        let generated = 0;
        let cachedTokens = 0;
        let pending: number[] = [];
        let pendingLogprobs: Array<TokenLogprob | undefined> = [];
        let first = true;
        let last: GenerationStep | undefined;
        const chunk = chunkWriter(head);
        // vLLM's echo puts the prompt's ids on the first chunk with or without return_token_ids.
        const firstPromptIds = echo ? [...params.promptIds] : promptIds;
        /** Writes the tokens not sent yet as one chunk. */
        const flush = (finishReason: GenerationStep["finishReason"], stopReason: number | null) => {
          const usage = continuousUsage ? usageOf(params.promptIds.length, generated) : null;
          // vLLM's text_offset starts at the text sent before the chunk: always "" here.
          const echoed = first && echo;
          const logprobs = withLogprobs
            ? echoed
              ? echoedLogprobs(params.promptIds, promptLogprobs, pending, pendingLogprobs)
              : completionLogprobs(pending, pendingLogprobs)
            : null;
          const text = chunk({
            tokenIds: pending,
            finishReason,
            stopReason,
            promptTokenIds: first ? firstPromptIds : null,
            withIds,
            usage,
            logprobs,
          });
          [first, pending] = [false, []];
          if (withLogprobs) pendingLogprobs = [];
          if (!abort.signal.aborted) controller.enqueue(encoder.encode(text));
        };
        try {
          for await (const step of generation.steps) {
            if (span !== undefined && generated === 0) recordFirstToken(span, startedAt);
            generated += 1;
            cachedTokens = step.cachedTokens ?? cachedTokens;
            pending.push(step.tokenId);
            if (withLogprobs) pendingLogprobs.push(step.logprob);
            promptLogprobs ??= step.promptLogprobs;
            last = step;
            // vLLM's --stream-interval: the first token at once, then every `streamInterval`
            // tokens, and the finish.
            if (step.finishReason === null && !first && pending.length < streamInterval) continue;
            flush(step.finishReason, step.stopReason);
          }
          if (cut(last)) throw drain.error();
          if (includeUsage) {
            // The usage chunk is dumped with exclude_none: no prompt_tokens_details without cached
            // tokens.
            const details = promptDetails(cachedTokens);
            send({
              ...head,
              choices: [],
              usage: {
                ...usageOf(params.promptIds.length, generated),
                ...(details === null ? {} : { prompt_tokens_details: details }),
              },
            });
          }
        } catch (error) {
          span?.recordException(error as Error);
          // Tokens held back by the stream interval go out before the error event.
          if (pending.length > 0) flush(null, null);
          send(vllmErrorBody(toServiceError(error)));
        }
        if (span !== undefined) {
          recordGeneration(span, {
            inputTokens: params.promptIds.length,
            outputTokens: generated,
            finishReason: last?.finishReason,
            responseId: head.id,
          });
        }
        if (abort.signal.aborted) return;
        send("[DONE]");
        controller.close();
      },
      cancel() {
        abort.abort();
      },
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "x-request-id": head.id,
        // The engine's queue as it takes this request, for the pools in front (ORCA's header),
        // to a request that asks for it, as vLLM answers.
        ...endpointLoadHeaders(c.req.header(LOAD_METRICS_FORMAT_HEADER), {
          running: decoder.runningCount,
          waiting: decoder.waitingCount,
        }),
        ...echoed,
      },
    });
  });
  return app;
}
