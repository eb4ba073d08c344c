// The origin's vLLM completion chunks read into the generation capability's steps: each chunk
// checked, its ids, finish, stop id and logprobs taken.
import { ServiceError } from "../../errors/service-error";
import { ErrorEvent, errorMessage } from "../../protocols/vllm-completions";
import {
  cachedTokensOf,
  CompletionChunk,
  isCompletionChunk,
} from "../../protocols/vllm-completion-chunk";
import { echoedLogprobsOf, logprobsOf } from "../../protocols/vllm-logprobs";
import type { GenerationStep } from "../runtime";

/** The 502 of an origin that failed or sent what cannot be read. */
export function upstream(detail: string, cause?: unknown): ServiceError {
  return new ServiceError(502, "upstream_error", detail, {
    cause,
    headers: { "retry-after": "5" },
  });
}

const NO_IDS: ReadonlySet<number> = new Set();

/** A request that asked for its prompt's logprobs: they come echoed on its first chunk. */
export interface EchoedPrompt {
  ids: readonly number[];
  /** Alternatives per position. */
  count: number;
  /** Set once the first chunk has been read. */
  read: boolean;
}

/** The usage chunk (`choices: []`), read for the prompt tokens the origin's prefix cache served. */
interface UsageReport {
  cachedTokens: number | undefined;
}

/**
 * One chunk's step, or the usage chunk's report; throws the 502 of a broken chunk or a mid-stream
 * error event. `logprobs`: how many alternatives the request asked for (undefined: none).
 */
function readStep(
  data: string,
  stopIds: ReadonlySet<number>,
  logprobs?: number,
  prompt?: EchoedPrompt,
): GenerationStep | UsageReport {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch (error) {
    throw upstream("The GPU origin sent a chunk that is not JSON", error);
  }
  // Error events are rare: only objects that look like one pay for the schema.
  if (
    typeof json === "object" &&
    json !== null &&
    ("error" in json || ("object" in json && json.object === "error"))
  ) {
    const failed = ErrorEvent.safeParse(json);
    throw upstream(
      "The GPU origin failed mid-stream: " +
        `${failed.success ? errorMessage(failed.data) : "an unreadable error event"}`,
    );
  }
  // Checked by hand per token; zod runs only to describe a chunk that fails the check.
  if (!isCompletionChunk(json))
    throw upstream(
      "The GPU origin sent an invalid completion chunk",
      CompletionChunk.safeParse(json).error,
    );
  const [choice] = json.choices;
  if (choice === undefined) return { cachedTokens: cachedTokensOf(json) };
  const tokenIds = choice.token_ids ?? [];
  if (choice.token_ids == null && (choice.text ?? "") !== "")
    throw upstream("The GPU origin sent no token_ids (return_token_ids unsupported?)");
  const step = choiceStep(choice, tokenIds, stopIds);
  let own = choice.logprobs;
  if (prompt !== undefined && !prompt.read) {
    // vLLM's echo: the first chunk's logprobs are the prompt's, then its tokens'.
    const echoed = own == null ? "no logprobs" : echoedLogprobsOf(own, prompt.ids, prompt.count);
    if (typeof echoed === "string")
      throw upstream(`The GPU origin sent unreadable prompt logprobs: ${echoed}`);
    [step.promptLogprobs, own, prompt.read] = [echoed.prompt, echoed.rest, true];
  }
  if (logprobs !== undefined && tokenIds.length > 0) {
    // Aligned with token_ids, the stop id included: the capability's order (the ids, then the stop
    // id).
    const parsed = own == null ? "no logprobs" : logprobsOf(own, tokenIds, logprobs);
    if (typeof parsed === "string")
      throw upstream(`The GPU origin sent unreadable logprobs: ${parsed}`);
    step.logprobs = parsed;
  }
  return step;
}

/** A choice's ids and finish as a step. */
function choiceStep(
  choice: CompletionChunk["choices"][number],
  tokenIds: number[],
  stopIds: ReadonlySet<number>,
): GenerationStep {
  if (choice.finish_reason == null) return { tokenIds };
  if (choice.finish_reason !== "stop" && choice.finish_reason !== "length")
    return { tokenIds, finishReason: "stop" };
  const last = tokenIds.at(-1);
  // vLLM keeps the stop token in token_ids (its text is dropped); the edge drops the id.
  if (choice.finish_reason === "stop" && last !== undefined && stopIds.has(last))
    return { tokenIds: tokenIds.slice(0, -1), finishReason: "stop", stopTokenId: last };
  return { tokenIds, finishReason: choice.finish_reason };
}

/**
 * The step of one origin read: every event the read completed, merged into one step (ids
 * joined in order, the finish on it), so that the layers above and the client see one
 * write per origin read — joining only what is already there, never waiting for more.
 * A failure after some ids comes back beside them, to be thrown once they are sent.
 *
 * Each chunk is checked by hand per token (zod only describes a broken one); the events of one
 * origin read are joined into one step; the usage chunk behind the finish is read for the prompt
 * tokens the origin's prefix cache served.
 */
export function stepOf(
  events: readonly string[],
  stopIds: ReadonlySet<number>,
  logprobs: number | undefined,
  prompt?: EchoedPrompt,
): { step?: GenerationStep; failure?: unknown; tailRead?: boolean } {
  let merged: GenerationStep | undefined;
  for (let at = 0; at < events.length; at++) {
    const data = events[at]!;
    let step: GenerationStep | UsageReport;
    try {
      if (data === "[DONE]") throw upstream("The GPU origin's stream ended before a finish reason");
      step = readStep(data, stopIds, logprobs, prompt);
    } catch (failure) {
      return { step: merged, failure };
    }
    // a usage chunk before the finish: the edge counts tokens itself
    if (!("tokenIds" in step)) continue;
    if (merged === undefined) merged = step;
    else {
      for (const id of step.tokenIds) merged.tokenIds.push(id);
      if (step.logprobs !== undefined) (merged.logprobs ??= []).push(...step.logprobs);
      if (step.promptLogprobs !== undefined) merged.promptLogprobs = step.promptLogprobs;
      if (step.finishReason !== undefined) merged.finishReason = step.finishReason;
      if (step.stopTokenId !== undefined) merged.stopTokenId = step.stopTokenId;
    }
    if (step.finishReason !== undefined)
      return { step: merged, tailRead: readTail(events.slice(at + 1), merged) };
  }
  return { step: merged };
}

/**
 * The events after the finish: the usage chunk's cached tokens go on the finished step.
 * True once the usage chunk or [DONE] is among them (nothing more to wait for); whatever
 * else the tail holds is not the client's (it is drained, not read).
 */
export function readTail(events: readonly string[], finished: GenerationStep): boolean {
  for (const data of events) {
    if (data === "[DONE]") return true;
    try {
      const report = readStep(data, NO_IDS);
      if ("tokenIds" in report) continue;
      if (report.cachedTokens !== undefined) finished.cachedTokens = report.cachedTokens;
      return true;
    } catch {
      return true; // a broken tail costs only the cached-token count
    }
  }
  return false;
}
