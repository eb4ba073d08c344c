// OpenAI-compatible text generation: POST /v1/chat/completions and POST /v1/completions, streamed
// (SSE chunks … `data: [DONE]`) or not.
import { OpenAPIHono } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import { capability, type ServedModel } from "../../tasks";
import type { PreparedPrompt } from "../../tasks/text-generation/text-generation";
import type { TemplateValue } from "../../tokenizers/chat-template";
import type { AppEnv } from "../http/services";
import { findModel, requireReady } from "../../tasks/model-lookup";
import { validationHook } from "../http/validation";
import { requireScope } from "../http/auth";
import { limitBody, requireJson } from "../http/body";
import {
  collectAll,
  collectPooled,
  sseResponse,
  startGeneration,
  startGenerations,
  versionHeader,
} from "./generation-stream";
import { chatRoute, completionRoute } from "./generation-routes";
import { MAX_PROMPTS, type PromptItem } from "./completion-request";
import { chatMessages, conversationKey } from "./chat-messages";
import { MAX_STREAMS } from "./sampling-fields";
import { chatCompletion, completion, identity, type PerChoice } from "./responses";
import { chatChunks } from "./chat-chunks";
import { completionChunks } from "./completion-chunks";
import type { ChunkOptions } from "./stream-chunks";
import { chatLogprobCount, choiceOptions, generationOptions } from "./sampling";
import { toolOptions, toolPlanOf } from "../../tasks/text-generation/tool-plan";
import { losslessBody } from "../http/lossless-body";
import { meteredFor } from "../http/limits";

interface Framed {
  stream?: boolean | null;
  return_token_ids?: boolean | null;
  stream_options?: {
    include_usage?: boolean | null;
    continuous_usage_stats?: boolean | null;
  } | null;
}

/**
 * What the answer says beside the text, as the request asks (return_token_ids, and when
 * streamed stream_options), and whether the generation's text events must carry their token
 * ids: to be returned, or counted for vLLM's continuous usage. `promptOf`: each choice's prompt.
 */
function framing(
  body: Framed,
  promptOf: PerChoice<readonly number[]>,
): { chunks: ChunkOptions; tokenIds: boolean } {
  const includeUsage = (body.stream ?? false) && (body.stream_options?.include_usage ?? false);
  const continuous = includeUsage && (body.stream_options?.continuous_usage_stats ?? false);
  const returned = body.return_token_ids ?? false;
  return {
    chunks: {
      includeUsage,
      ...(returned ? { promptIds: promptOf } : {}),
      ...(continuous
        ? { continuousUsage: { promptTokens: (index: number) => promptOf(index).length } }
        : {}),
    },
    tokenIds: returned || continuous,
  };
}

/**
 * The prompt's text as echo repeats it: a text prompt as sent; token ids (or a truncated
 * prompt) decoded, special tokens kept (as /detokenize decodes them).
 */
async function echoText(
  model: ServedModel,
  prompt: PromptItem,
  ids: readonly number[],
  truncated: boolean,
): Promise<string> {
  if ("text" in prompt && !truncated) return prompt.text;
  if (model.tokenization === undefined)
    throw new Error(`Model ${model.manifest.name} generates text without a tokenizer`);
  return model.tokenization.detokenize(ids);
}

/** POST /v1/chat/completions. */
export const chatRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
chatRoutes.use(requireScope("generate", { reservesTokens: true }));
chatRoutes.on("POST", "*", requireJson, limitBody);
chatRoutes.openapi(chatRoute, async (c) => {
  const body = c.req.valid("json");
  const model = findModel(c.get("services"), body.model, "model");
  const generator = meteredFor(c, capability(model, "textGeneration", "model"));
  await requireReady(model);
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? undefined;
  if (body.continue_final_message && body.add_generation_prompt !== false) {
    // vLLM's check (ChatCompletionRequest.check_generation_prompt); add_generation_prompt defaults
    // to true.
    throw new ServiceError(
      400,
      "invalid_request",
      "Cannot set both continue_final_message and add_generation_prompt to true",
      { field: "continue_final_message" },
    );
  }
  // The tools as sent, numbers as written (a schema's 1.0 stays 1.0 in the template, as Python's
  // json keeps it).
  const sent =
    body.tools == null || body.tools.length === 0 ? undefined : (await losslessBody(c.req)).tools;
  const tools = Array.isArray(sent) ? sent : undefined;
  const plan = toolPlanOf(body, {
    name: model.manifest.name,
    parser: generator.manifest.generation.toolCallParser,
  });
  const prompt = await generator.prepare(
    {
      messages: chatMessages(body.messages),
      ...(tools === undefined ? {} : { tools }),
      addGenerationPrompt: body.add_generation_prompt ?? true,
      continueFinalMessage: body.continue_final_message ?? false,
      ...(body.chat_template_kwargs == null
        ? {}
        : { kwargs: body.chat_template_kwargs as Record<string, TemplateValue> }),
    },
    maxTokens,
    body.truncate_prompt_tokens ?? undefined,
  );
  const logprobs = chatLogprobCount(body);
  const { chunks, tokenIds } = framing(body, () => prompt.ids);
  const options = {
    ...generationOptions(body, maxTokens),
    tokenIds,
    ...(logprobs === undefined ? {} : { logprobs }),
    ...toolOptions(plan),
    conversationKey: conversationKey(body.messages),
  };
  const choices = await startGenerations(
    generator,
    choiceOptions(options, body.n ?? 1).map((each) => ({ prompt, options: each })),
    c.req.raw.signal,
  );
  const who = identity("chatcmpl", model.manifest.name);
  const toolMode = plan?.mode;
  if (body.stream) return sseResponse(choices, chatChunks(who, { ...chunks, toolMode }));
  const collected = await collectAll(choices);
  const versions = versionHeader(collected.map((choice) => choice.modelVersion));
  for (const [name, value] of Object.entries(versions)) c.header(name, value);
  return c.json(
    chatCompletion(who, collected, {
      logprobs: logprobs !== undefined,
      promptIds: chunks.promptIds,
      toolMode,
    }),
    200,
  );
});

/** POST /v1/completions. */
export const completionRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
completionRoutes.use(requireScope("generate", { reservesTokens: true }));
completionRoutes.on("POST", "*", requireJson, limitBody);
completionRoutes.openapi(completionRoute, async (c) => {
  const body = c.req.valid("json");
  const model = findModel(c.get("services"), body.model, "model");
  const generator = meteredFor(c, capability(model, "textGeneration", "model"));
  await requireReady(model);
  // OpenAI's legacy completions default to 16 tokens, as vLLM's do.
  const maxTokens = body.max_tokens ?? 16;
  const echo = body.echo ?? false;
  // As vLLM's SamplingParams: nothing to generate is a request only for the echoed prompt.
  if (maxTokens === 0 && !echo)
    throw new ServiceError(
      400,
      "invalid_request",
      "max_tokens must be at least 1, got 0 (0 only with echo: true)",
      { field: "max_tokens" },
    );
  const n = body.n ?? 1;
  const limit = body.stream ? MAX_STREAMS : MAX_PROMPTS;
  if (body.prompt.length * n > limit) {
    const detail =
      `${body.prompt.length} prompts × n = ${n} is ` +
      `${body.prompt.length * n} generations; at most ${limit} per ` +
      `request${body.stream ? " when streamed (six connections at once)" : ""}`;
    throw new ServiceError(400, "invalid_request", detail, { field: "prompt" });
  }
  const prompts: PreparedPrompt[] = [];
  for (const item of body.prompt) {
    prompts.push(
      await generator.prepare(
        "text" in item
          ? { prompt: item.text, field: item.field }
          : { promptIds: item.ids, field: item.field },
        maxTokens,
        body.truncate_prompt_tokens ?? undefined,
      ),
    );
  }
  // Choice i·n + j is prompt i's choice j, as vLLM indexes a batch's choices.
  const promptOf = (index: number) => prompts[Math.floor(index / n)]!.ids;
  const logprobs = body.logprobs ?? undefined;
  const { chunks, tokenIds } = framing(body, promptOf);
  // vLLM's echo: with logprobs, the prompt is scored with the same count of alternatives.
  const scored = echo && logprobs !== undefined ? { promptLogprobs: logprobs } : {};
  const options = choiceOptions(
    {
      ...generationOptions(body, maxTokens),
      tokenIds,
      ...(logprobs === undefined ? {} : { logprobs }),
      ...scored,
    },
    n,
  );
  const echoes = echo
    ? await Promise.all(
        body.prompt.map((item, i) =>
          echoText(model, item, prompts[i]!.ids, body.truncate_prompt_tokens != null),
        ),
      )
    : undefined;
  const echoOf =
    echoes === undefined ? undefined : (index: number) => echoes[Math.floor(index / n)]!;
  const who = identity("cmpl", model.manifest.name);
  const runs = prompts.flatMap((prompt) => options.map((each) => ({ prompt, options: each })));
  if (body.stream) {
    const choices = await startGenerations(generator, runs, c.req.raw.signal);
    return sseResponse(
      choices,
      completionChunks(who, {
        ...chunks,
        ...(echoOf === undefined ? {} : { echo: { text: echoOf, scored: logprobs !== undefined } }),
      }),
      {},
      n,
    );
  }
  const jobs = runs.map(
    (run) => (signal: AbortSignal) => startGeneration(generator, run.prompt, run.options, signal),
  );
  const collected = await collectPooled(jobs, c.req.raw.signal, MAX_STREAMS);
  const versions = versionHeader(collected.map((choice) => choice.modelVersion));
  for (const [name, value] of Object.entries(versions)) c.header(name, value);
  return c.json(
    completion(who, collected, {
      logprobs: logprobs !== undefined,
      promptIds: chunks.promptIds,
      echo: echoOf,
      perPrompt: n,
    }),
    200,
  );
});
