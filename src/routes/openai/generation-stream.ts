// Runs a request's text generations (its `n` choices) for a route over the shared event stream:
// each one's first event is read before answering, then SSE frames per token.
import type {
  PreparedPrompt,
  PromptTokenLogprobs,
  TextEvent,
  TextGenerator,
  GenerationOptions,
  TokenLogprobs,
  Usage,
} from "../../tasks/text-generation/text-generation";
import {
  allEvents,
  mergeEvents,
  sseData,
  sseResponse as eventsResponse,
  startEvents,
  type StartedEvents,
} from "../http/event-stream";

export type StartedGeneration = StartedEvents<TextEvent>;

/**
 * A JSON frame with one string slot, serialized once: `fill(text)` is the JSON of `shape`
 * with `text` in the slot, byte for byte what JSON.stringify would give, for the cost of
 * stringifying the text alone — the per-token frame of a stream.
 */
export function jsonTemplate(shape: (slot: string) => unknown): (text: string) => string {
  const SLOT = "\u0000slot\u0000";
  const json = JSON.stringify(shape(SLOT));
  const at = json.indexOf(JSON.stringify(SLOT));
  if (at === -1 || json.indexOf(JSON.stringify(SLOT), at + 1) !== -1)
    throw new Error("jsonTemplate: the shape must hold the slot exactly once");
  const head = json.slice(0, at);
  const tail = json.slice(at + JSON.stringify(SLOT).length);
  return (text) => head + JSON.stringify(text) + tail;
}

/**
 * `x-model-version`: the version label(s) of the replicas that accepted the choices, when the
 * model is served in versions (ORIGIN_CANARY); none otherwise.
 */
export function versionHeaders(choices: readonly StartedGeneration[]): Record<string, string> {
  return versionHeader(
    choices.map(({ first }) => (first?.type === "accepted" ? first.modelVersion : undefined)),
  );
}

/** `x-model-version` from the choices' versions (distinct, in order), or none. */
export function versionHeader(versions: readonly (string | undefined)[]): Record<string, string> {
  const named = [...new Set(versions.filter((version) => version !== undefined))];
  return named.length === 0 ? {} : { "x-model-version": named.join(", ") };
}

/** Starts a generation and reads its first event; throws the ServiceError of a refusal. */
export function startGeneration(
  generator: TextGenerator,
  prompt: PreparedPrompt,
  options: GenerationOptions,
  clientSignal: AbortSignal,
): Promise<StartedGeneration> {
  return startEvents((signal) => generator.generate(prompt, options, signal), clientSignal);
}

/**
 * Starts one generation per run (a request's choices: `n` per prompt) and reads each one's
 * first event. If any is refused, the others are aborted and the first refusal by index is
 * thrown, so a refusal is an HTTP error before any choice streams.
 *
 * A choice's first event is the origin's acceptance (its 200, before the first token) or the first
 * text.
 */
export async function startGenerations(
  generator: TextGenerator,
  runs: ReadonlyArray<{ prompt: PreparedPrompt; options: GenerationOptions }>,
  clientSignal: AbortSignal,
): Promise<StartedGeneration[]> {
  const settled = await Promise.allSettled(
    runs.map((run) => startGeneration(generator, run.prompt, run.options, clientSignal)),
  );
  const started = settled.flatMap((result) =>
    result.status === "fulfilled" ? [result.value] : [],
  );
  const refused = settled.find((result) => result.status === "rejected");
  if (refused === undefined) return started;
  for (const each of started) each.abort();
  throw refused.reason;
}

type Done = Extract<TextEvent, { type: "done" }>;

/** A text delta, with its tokens' logprobs and ids when they were asked for. */
export type TextDelta = Extract<TextEvent, { type: "text" }>;

/** A choice read to its end. */
export interface Collected {
  text: string;
  done: Done;
  /** Every token's logprobs, in order, when they were asked for. */
  logprobs?: TokenLogprobs[];
  /** Every generated token's id, in order (a stop token included), when they were asked for. */
  tokenIds?: number[];
  /** The prompt's logprobs, when they were asked for. */
  promptLogprobs?: PromptTokenLogprobs[];
  /** The version label of the replica that accepted it (a model served in versions). */
  modelVersion?: string;
}

/** What a stream-format needs: how to frame each choice's events, and what closes the stream. */
export interface StreamFormat {
  /** Frames sent before a choice's first event (e.g. the assistant role chunk). */
  opening(index: number): unknown[];
  /**
   * Per token: return pre-serialized JSON strings (jsonTemplate) rather than objects. With
   * logprobs or token ids (asked for), the text may be empty: the tokens' text is still held back.
   */
  text(delta: TextDelta, index: number): unknown[];
  /** The prompt's logprobs, when they were asked for (before the choice's first text). */
  prompt?(event: Extract<TextEvent, { type: "prompt" }>, index: number): unknown[];
  /** A choice's end (its finish reason). */
  done(event: Done, index: number): unknown[];
  /** Once every choice has ended: their usage together (e.g. include_usage's last chunk). */
  usage(usage: Usage): unknown[];
}

/**
 * The usage of a request's choices together, as vLLM counts it: each prompt once (a batch's
 * choices come `perPrompt` to a prompt, in order), the completions summed; the prefix cache's
 * share as each prompt's first choice's origin reported it.
 */
export function totalUsage(usages: readonly Usage[], perPrompt = usages.length): Usage {
  if (perPrompt < usages.length) {
    const groups: Usage[] = [];
    for (let at = 0; at < usages.length; at += perPrompt)
      groups.push(totalUsage(usages.slice(at, at + perPrompt)));
    const sum = (of: (usage: Usage) => number) =>
      groups.reduce((total, usage) => total + of(usage), 0);
    const cached = sum((usage) => usage.prompt_tokens_details?.cached_tokens ?? 0);
    const [prompt, completion] = [
      sum((usage) => usage.prompt_tokens),
      sum((usage) => usage.completion_tokens),
    ];
    const reported = groups.some((usage) => usage.prompt_tokens_details !== undefined);
    return {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      ...(reported ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
    };
  }
  const [first, ...rest] = usages;
  if (first === undefined) throw new Error("totalUsage: no choices");
  if (rest.length === 0) return first;
  const completion = usages.reduce((sum, usage) => sum + usage.completion_tokens, 0);
  return {
    prompt_tokens: first.prompt_tokens,
    completion_tokens: completion,
    total_tokens: first.prompt_tokens + completion,
    ...(first.prompt_tokens_details === undefined
      ? {}
      : { prompt_tokens_details: first.prompt_tokens_details }),
  };
}

/**
 * Started generations (a request's choices) as SSE: one chunk per event (its frames joined),
 * each choice's events in order and the choices interleaved as they come; the usage once every
 * choice has ended; errors as `data: {error}` (which abort the other choices), then [DONE].
 */
export function sseResponse(
  choices: readonly StartedGeneration[],
  format: StreamFormat,
  headers: Record<string, string> = {},
  perPrompt = choices.length,
): Response {
  const frames = (list: readonly unknown[]) => list.map(sseData).join("");
  headers = { ...versionHeaders(choices), ...headers };
  const usages: Usage[] = [];
  let open = choices.length;
  const framed = (event: TextEvent, index: number) => {
    if (event.type === "accepted") return "";
    if (event.type === "text") return frames(format.text(event, index));
    if (event.type === "prompt") return frames(format.prompt?.(event, index) ?? []);
    usages[index] = event.usage;
    open -= 1;
    return (
      frames(format.done(event, index)) +
      (open === 0 ? frames(format.usage(totalUsage(usages, perPrompt))) : "")
    );
  };
  const failure = "generation_failed_mid_stream";
  const [only] = choices;
  if (choices.length === 1 && only !== undefined) {
    return eventsResponse(
      only,
      { opening: () => frames(format.opening(0)), event: (event) => framed(event, 0), failure },
      headers,
    );
  }
  return eventsResponse(
    mergeEvents(choices),
    {
      opening: () => choices.map((_, index) => frames(format.opening(index))).join(""),
      event: ([index, event]) => framed(event, index),
      failure,
    },
    headers,
  );
}

/** Reads a started generation to its end: the whole text, its finish reason and usage. */
export async function collect(started: StartedGeneration): Promise<Collected> {
  let text = "";
  let done: Done | undefined;
  let logprobs: TokenLogprobs[] | undefined;
  let tokenIds: number[] | undefined;
  let promptLogprobs: PromptTokenLogprobs[] | undefined;
  let modelVersion: string | undefined;
  for await (const event of allEvents(started)) {
    if (event.type === "accepted") modelVersion = event.modelVersion;
    else if (event.type === "prompt") promptLogprobs = event.logprobs;
    else if (event.type === "text") {
      text += event.text;
      if (event.logprobs !== undefined) (logprobs ??= []).push(...event.logprobs);
      if (event.tokenIds !== undefined) (tokenIds ??= []).push(...event.tokenIds);
    } else if (event.type === "done") done = event;
  }
  if (done === undefined) throw new Error("generation ended without a done event");
  return {
    text,
    done,
    ...(logprobs === undefined ? {} : { logprobs }),
    ...(tokenIds === undefined ? {} : { tokenIds }),
    ...(promptLogprobs === undefined ? {} : { promptLogprobs }),
    ...(modelVersion === undefined ? {} : { modelVersion }),
  };
}

/**
 * Runs generations to their ends, at most `limit` at a time (a Worker invocation holds six
 * connections open at once: more would wait on one another), the results in `jobs`' order.
 * The first failure aborts the rest and is thrown.
 */
export async function collectPooled(
  jobs: ReadonlyArray<(signal: AbortSignal) => Promise<StartedGeneration>>,
  clientSignal: AbortSignal,
  limit: number,
): Promise<Collected[]> {
  const failed = new AbortController();
  const signal = AbortSignal.any([clientSignal, failed.signal]);
  const results: Collected[] = [];
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (next < jobs.length && failure === undefined) {
      const at = next++;
      try {
        results[at] = await collect(await jobs[at]!(signal));
      } catch (error) {
        failure ??= { error };
        failed.abort(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  if (failure !== undefined) throw failure.error;
  return results;
}

/** Reads every choice to its end, side by side; one failing aborts the others. */
export async function collectAll(choices: readonly StartedGeneration[]): Promise<Collected[]> {
  try {
    return await Promise.all(choices.map(collect));
  } catch (error) {
    for (const choice of choices) choice.abort();
    throw error;
  }
}
