// The decoder engine: continuous batching over a decoder graph with a KV cache, one decode step
// for every running request at a time.
import type { GenerationConfig } from "../../manifests";
import type { EngineMetrics } from "../../metrics/vllm-metrics";
import type { ort } from "../onnx-session";
import { LOGITS_INDEX } from "../../onnx/last-logits";
import { threadCpuClock } from "../thread-cpu";
import { admit, keptRows, prefillRuns, type Admission } from "./admission";
import { recordAdmitted, recordPrefill, recordStep } from "./engine-records";
import { constraintOf } from "./constraint";
import { KvCache, type RowSource } from "./kv-cache";
import { atCapacity, type DecoderLimits } from "./limits";
import { prefillFault, prefillBatch, prefilledRows, prefillFeeds, prefillOutputs } from "./prefill";
import { BLOCK, PrefixCache, PromptBlocks } from "./prefix-cache";
import type { GenerationParams } from "./generation-params";
import { DecodeRequest, type RequestOptions } from "./request";
import { StepBuffers, stepFeeds, stepFetches } from "./step-inputs";
import { TokenOutput } from "./token-output";
import type { Vocabulary } from "./vocabulary";

const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The decoder engine: continuous batching over an onnxruntime session of a decoder with
 * KV-cache inputs/outputs (CONTRACTS.md). Each iteration of its loop (1) drops finished
 * and aborted requests, (2) prefills waiting ones (those that arrived together in one
 * run, right-padded, then laid into the batch cache), (3) runs ONE decode step for every
 * running request together — a [rows, 1] input over the preallocated cache, masked per
 * row — and samples each row with its own seeded PRNG. HTTP I/O runs between iterations,
 * so requests join and leave between steps.
 * With a split-attention graph (origin/onnx/split-attention.ts) a step's presents are
 * only the new column; with the graph as exported they are the whole cache plus it.
 * This file holds the queue, the loop, the decode step and the metrics; admission.ts picks
 * the rows that stay and the requests that join, prefill.ts builds a prefill run's inputs
 * and reads its outputs, step-inputs.ts a decode step's, token-output.ts sends each request's
 * tokens (next-token.ts samples a row's token and says what it means) and ends it; a request
 * with a structured output gets its Constraint (constraint.ts) here, over the engine's vocabulary.
 */
export class DecoderEngine {
  private waiting: DecodeRequest[] = [];
  /** Running requests; index = row of the batch cache. */
  private running: DecodeRequest[] = [];
  private readonly cache: KvCache;
  private readonly prefixCache: PrefixCache | undefined;
  private readonly eos: ReadonlySet<number>;
  private readonly buffers: StepBuffers;
  private readonly output: TokenOutput;
  /**
   * Whether the graph takes `logits_index` (origin/onnx/last-logits.ts): logits for one position
   * per row.
   */
  private readonly lastLogits: boolean;
  private readonly prefillLastLogits: boolean;
  private wake: (() => void) | undefined;
  private nextId = 0;
  /** Decode steps run so far (tests read it to show an abort stops decoding within one step). */
  steps = 0;
  /** This thread's CPU seconds (the engine may run on a worker beside the HTTP thread). */
  private readonly cpuSeconds = threadCpuClock();

  constructor(
    readonly modelName: string,
    private readonly session: ort.InferenceSession,
    readonly generation: GenerationConfig,
    private readonly limits: DecoderLimits,
    private readonly metrics: EngineMetrics,
    /** Whether the session runs the split-attention rewrite (presents = new columns only). */
    readonly splitAttention: boolean,
    /**
     * The session prefills run on (default: `session`). With no past, the split rewrite's
     * score concatenation and weight slices are copies for nothing, so the host passes the
     * graph as exported (with last-position logits) here: same presents, ~15% less work.
     */
    private readonly prefillSession: ort.InferenceSession = session,
    /** The model's token bytes, for structured outputs (none: requests asking for one fail). */
    private readonly vocabulary?: Vocabulary,
  ) {
    this.cache = new KvCache({
      layers: generation.layers,
      kvHeads: generation.kvHeads,
      headDim: generation.headDim,
    });
    this.prefixCache =
      limits.prefixCacheBytes > 0
        ? new PrefixCache(this.cache.shape, limits.prefixCacheBytes, limits.prefixCacheAdmitAll)
        : undefined;
    this.buffers = new StepBuffers(limits.maxBatch);
    this.eos = new Set([generation.eosTokenId, ...generation.stopTokenIds]);
    this.output = new TokenOutput(this, metrics, this.eos, generation.contextLength);
    this.lastLogits = session.inputNames.includes(LOGITS_INDEX);
    this.prefillLastLogits = prefillSession.inputNames.includes(LOGITS_INDEX);
    void this.loop();
  }

  /** Requests in the batch, aborted ones excluded the moment they abort. */
  get runningCount(): number {
    return this.running.filter((request) => request.state === "running" && !request.aborted).length;
  }

  get waitingCount(): number {
    return this.waiting.filter((request) => !request.aborted).length;
  }

  get kvCacheBytes(): number {
    return this.cache.bytes;
  }

  /** Whether it can serve structured outputs (it has the model's token bytes). */
  get structuredOutputs(): boolean {
    return this.vocabulary !== undefined;
  }

  get prefixCacheBytes(): number {
    return this.prefixCache?.bytes ?? 0;
  }

  /**
   * Queues a request; its steps arrive on `request.steps`. A full queue is a 429 with
   * Retry-After; an aborted signal removes the request before the engine's next step.
   */
  submit(
    params: GenerationParams,
    signal: AbortSignal,
    options: RequestOptions = {},
  ): DecodeRequest {
    if (this.runningCount + this.waitingCount >= this.limits.maxBatch + this.limits.maxWaiting)
      throw atCapacity(this.limits);
    const request = new DecodeRequest(
      `${this.modelName}-${this.nextId++}`,
      params,
      options,
      constraintOf(params, this.vocabulary, this.eos, this.modelName),
    );
    const abort = () => {
      if (request.state === "finished") return;
      request.aborted = true;
      this.output.finish(request, "abort");
    };
    if (signal.aborted) abort();
    else signal.addEventListener("abort", abort, { once: true });
    this.waiting.push(request);
    this.wake?.();
    return request;
  }

  /**
   * Prefills a group of admitted requests in ONE run (prefill.ts): emits each request's first
   * token, keeps the prompts' whole blocks in the prefix cache, and returns where each row's
   * keys/values lie.
   */
  private async prefill(group: readonly Admission[]): Promise<RowSource[]> {
    const batch = prefillBatch(group, this.cache, this.prefixCache);
    // Without a past the graph as exported runs (see prefillSession); with one, the step's graph.
    const session = batch.past === 0 ? this.prefillSession : this.session;
    const lastLogits = batch.past === 0 ? this.prefillLastLogits : this.lastLogits;
    const feeds = prefillFeeds(batch, this.cache, lastLogits);
    const [started, cpuBefore] = [performance.now(), this.cpuSeconds()];
    const outputs = await session.run(feeds);
    const cpu = this.cpuSeconds() - cpuBefore;
    await prefillFault(this.limits.prefillUsPerToken, group);
    const seconds = (performance.now() - started) / 1000;
    recordPrefill(this.metrics, this.metrics.labelsOf(this), group.length, seconds, cpu);
    const read = prefillOutputs(batch, outputs, this.cache);
    return prefilledRows(batch, read, {
      lastLogits,
      vocabSize: this.generation.vocabSize,
      prefixCache: this.prefixCache,
      emit: (request, logits, prompt) => this.output.emit(request, logits, prompt),
    });
  }

  /** One decode step for every running request: one token each. */
  private async step(): Promise<void> {
    const rows = this.running.length;
    const capacity = this.cache.capacity;
    const { vocabSize } = this.generation;
    const mask = this.buffers.maskOf(rows, capacity + 1);
    const logits = this.buffers.logitsOf(rows, vocabSize);
    const feeds = stepFeeds(this.running, this.cache, mask, this.lastLogits);
    const columns = this.splitAttention ? 1 : capacity + 1;
    const fetches = stepFetches(logits, rows, vocabSize, this.cache, columns);
    const [started, cpuBefore] = [performance.now(), this.cpuSeconds()];
    await this.session.run(feeds, fetches);
    const stepSeconds = (performance.now() - started) / 1000;
    const cpu = this.cpuSeconds() - cpuBefore;
    this.cache.appendStep(
      this.running.map((request) => request.filled),
      columns,
      columns - 1,
    );
    this.steps += 1;
    recordStep(this.metrics, this.metrics.labelsOf(this), rows, stepSeconds, cpu);
    this.running.forEach((request, row) => {
      request.filled += 1;
      // An aborted row was decoded only because it aborted during this step; its token goes
      // nowhere.
      if (request.state === "running")
        this.output.emit(request, logits.subarray(row * vocabSize, (row + 1) * vocabSize));
    });
    // Rows end only here or by an abort, and leave before the next step: these ended with it.
    // Their prompt and output go to the prefix cache (a chat's next turn resends them).
    this.running.forEach((request, row) => {
      if (request.state !== "finished" || request.aborted || !this.prefixCache) return;
      request.blocks ??= new PromptBlocks(request.params.promptIds);
      const segment = this.cache.rowSegment(row, request.filled);
      this.prefixCache.keepAnswer(request.blocks, request.generated, request.filled, segment);
    });
  }

  /**
   * Drops finished/aborted rows, prefills newcomers (as many as fit the batch and the
   * prefill budget, counted in padded tokens, in one run), and lays the cache out for them.
   */
  private async schedule(): Promise<void> {
    const kept = keptRows(this.running);
    this.waiting = this.waiting.filter((request) => request.state === "waiting");
    const { admitted, real } = admit(
      this.waiting,
      this.limits.maxBatch - kept.length,
      this.limits.prefillTokensPerStep,
      this.prefixCache,
    );
    this.waiting.splice(0, admitted.length);
    for (const { request, cached } of admitted) {
      request.state = "running";
      request.cachedTokens = cached.length * BLOCK;
      request.admitted?.();
    }
    const labels = this.metrics.labelsOf(this);
    recordAdmitted(this.metrics, labels, admitted, real, this.prefixCache !== undefined);
    const prefilled = new Map<DecodeRequest, RowSource>();
    // In the order admission.ts gives: cached prefixes first, prompts scored for logprobs last.
    for (const run of prefillRuns(admitted)) {
      try {
        const sources = await this.prefill(run);
        run.forEach(({ request }, i) => prefilled.set(request, sources[i]!));
      } catch (error) {
        // Requests between the queue and the batch: the loop's handler does not see them.
        for (const { request } of admitted) this.output.fail(request, error);
        throw error;
      }
    }
    // Requests that finished with their first token, or aborted during the prefill, do not join.
    const joined = admitted.flatMap(({ request }) =>
      request.state === "running" ? [{ request, source: prefilled.get(request)! }] : [],
    );
    // Rows that finished since the last step leave at the next iteration.
    const filledMax = [
      ...kept.map(({ request }) => request.filled),
      ...joined.map(({ request }) => request.filled),
    ].reduce((a, b) => Math.max(a, b), 0);
    if (
      kept.length === this.running.length &&
      joined.length === 0 &&
      filledMax < this.cache.capacity
    )
      return;
    const sources: RowSource[] = [
      ...kept.map(
        ({ request, row }): RowSource => ({ kind: "batch", row, filled: request.filled }),
      ),
      ...joined.map(({ source }) => source),
    ];
    this.cache.rebuild(sources);
    this.running = [...kept.map(({ request }) => request), ...joined.map(({ request }) => request)];
  }

  private async loop(): Promise<void> {
    for (;;) {
      try {
        if (
          this.running.length === 0 &&
          this.waiting.every((request) => request.state !== "waiting")
        ) {
          this.waiting = [];
          await new Promise<void>((resolve) => (this.wake = resolve));
          this.wake = undefined;
        }
        await this.schedule();
        if (this.running.some((request) => request.state === "running")) await this.step();
      } catch (error) {
        // A failed run fails the requests in flight, not the engine: the next ones start clean.
        console.error(
          JSON.stringify({ event: "decode_failed", model: this.modelName, error: String(error) }),
        );
        for (const request of [...this.running, ...this.waiting]) this.output.fail(request, error);
        this.running = [];
        this.waiting = [];
        this.cache.rebuild([]);
      }
      await yieldToIo();
    }
  }
}
