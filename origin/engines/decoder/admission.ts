// The decoder engine's row bookkeeping between steps: which running requests keep their rows
// (and where), which waiting ones join the batch (as many as fit the batch and the prefill
// budget), and how those that join are grouped into prefill runs.
import { BLOCK, PromptBlocks, type PrefixCache } from "./prefix-cache";
import type { DecodeRequest } from "./request";

/** A request leaving the queue for the batch, with the cached blocks its prompt starts with. */
export interface Admission {
  request: DecodeRequest;
  cached: ReturnType<PrefixCache["match"]>;
}

/** Whether a request asked for its prompt's logprobs (vLLM's echo with logprobs). */
export const scored = (request: DecodeRequest) => request.params.promptLogprobs !== undefined;

/**
 * The running requests that stay, as the rows of the next layout: a row keeps its place, and
 * a row that leaves is filled by the last row that stays (so that rows leaving one at a time
 * move one row of the cache each, not every row after them).
 */
export function keptRows(
  running: readonly DecodeRequest[],
): { request: DecodeRequest; row: number }[] {
  const stays = running.map((request) => request.state === "running");
  const count = stays.filter(Boolean).length;
  const kept: { request: DecodeRequest; row: number }[] = [];
  // Rows that stay past the first `count` fill the places of those that leave before it.
  let donor = running.length;
  for (let row = 0; row < count; row++) {
    let from = row;
    if (!stays[row]) {
      do donor -= 1;
      while (!stays[donor]);
      from = donor;
    }
    kept.push({ request: running[from]!, row: from });
  }
  return kept;
}

/**
 * The waiting requests that join the batch, from the front of the queue, each with the cached
 * blocks its prompt starts with: at most `room`, and as many as the prefill budget holds,
 * counted in padded tokens to compute (one at least). `real` counts their tokens unpadded.
 */
export function admit(
  waiting: readonly DecodeRequest[],
  room: number,
  prefillTokensPerStep: number,
  prefixCache: PrefixCache | undefined,
): { admitted: Admission[]; real: number } {
  const admitted: Admission[] = [];
  let [longest, real] = [0, 0];
  for (const request of waiting) {
    if (admitted.length >= room) break;
    // A prompt whose logprobs are asked for is computed whole, as vLLM's (vllm/v1/request.py
    // skip_reading_prefix_cache; vllm/v1/core/kv_cache_manager.py get_computed_blocks).
    const cached = scored(request)
      ? []
      : (prefixCache?.match((request.blocks ??= new PromptBlocks(request.params.promptIds))) ?? []);
    // Counted in tokens to compute: a cached prefix costs only its copy.
    const n = request.params.promptIds.length - cached.length * BLOCK;
    const padded = (admitted.length + 1) * Math.max(longest, n);
    // One prompt at least; then as many as the budget holds, wasting at most a third on padding.
    if (admitted.length > 0 && (padded > prefillTokensPerStep || padded > 1.5 * (real + n))) break;
    admitted.push({ request, cached });
    [longest, real] = [Math.max(longest, n), real + n];
  }
  return { admitted, real };
}

/**
 * The admitted requests' prefill runs, in order. Prompts with and without a cached prefix run
 * apart (a past of zero columns takes the graph as exported), those with one first: their
 * blocks are read before any insert can reuse them. Prompts whose logprobs were asked for run
 * last, apart: only their run computes every position's logits.
 */
export function prefillRuns(admitted: readonly Admission[]): Admission[][] {
  return [
    admitted.filter(({ cached }) => cached.length > 0),
    admitted.filter(({ request, cached }) => cached.length === 0 && !scored(request)),
    admitted.filter(({ request }) => scored(request)),
  ].filter((run) => run.length > 0);
}
