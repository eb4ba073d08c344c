// A request's output from the decoder engine: each sampled token sent on its steps, with the
// latency metrics, and its end (a finish reason, or an error) closing them.
import { ServiceError } from "../../../src/errors/service-error";
import type { TokenLogprob } from "../../../src/generation/logprobs";
import type { EngineMetrics } from "../../metrics/vllm-metrics";
import { sampleNext, stepOf } from "./next-token";
import type { DecodeRequest } from "./request";

export class TokenOutput {
  constructor(
    /** The engine whose model names the metrics' labels. */
    private readonly engine: { readonly modelName: string },
    private readonly metrics: EngineMetrics,
    private readonly eos: ReadonlySet<number>,
    private readonly contextLength: number,
  ) {}

  finish(request: DecodeRequest, reason: "stop" | "length" | "abort"): void {
    if (request.state === "finished") return;
    request.state = "finished";
    request.steps.close();
    const labels = this.metrics.labelsOf(this.engine);
    const now = performance.now();
    this.metrics.requestSuccess.inc({ ...labels, finished_reason: reason });
    this.metrics.e2eLatency.observe(labels, (now - request.arrivedAt) / 1000);
    this.metrics.requestPromptTokens.observe(labels, request.params.promptIds.length);
    this.metrics.requestGenerationTokens.observe(labels, request.generated.length);
    if (request.generated.length > 1) {
      this.metrics.timePerOutputToken.observe(
        labels,
        (request.lastTokenAt - request.firstTokenAt) / 1000 / (request.generated.length - 1),
      );
    }
  }

  /**
   * Ends a request with an error: a client's (below 500) as it is, anything else the decoder's 500.
   */
  fail(request: DecodeRequest, error: unknown): void {
    if (request.state === "finished") return;
    request.state = "finished";
    request.steps.close(
      error instanceof ServiceError && error.status < 500
        ? error
        : new ServiceError(500, "internal_error", "The decoder failed", { cause: error }),
    );
  }

  /**
   * Samples the request's next token from its logits row and sends it out (the first with its
   * prompt's logprobs, when asked). A structured output the origin cannot keep (vocabulary.ts)
   * fails its own request, not the batch.
   */
  emit(request: DecodeRequest, logits: Float32Array, prompt?: Array<TokenLogprob | null>): void {
    try {
      this.sendNext(request, logits, prompt);
    } catch (error) {
      if (!(error instanceof ServiceError) || error.status >= 500) throw error;
      this.fail(request, error);
    }
  }

  private sendNext(
    request: DecodeRequest,
    logits: Float32Array,
    prompt?: Array<TokenLogprob | null>,
  ): void {
    // A structured output ends with the token after which nothing may follow (next-token.ts);
    // only one that allows no first token ends here, with none (the route refuses such choices).
    if (request.generated.length === 0 && request.constraint?.ended === true) {
      this.finish(request, "stop");
      return;
    }
    const tokenId = sampleNext(request, logits, this.eos);
    const now = performance.now();
    const labels = this.metrics.labelsOf(this.engine);
    if (request.generated.length === 0) {
      request.firstTokenAt = now;
      this.metrics.timeToFirstToken.observe(labels, (now - request.arrivedAt) / 1000);
    } else this.metrics.interTokenLatency.observe(labels, (now - request.lastTokenAt) / 1000);
    request.lastTokenAt = now;
    request.generated.push(tokenId);
    request.pending = tokenId;
    this.metrics.generationTokens.inc(labels);
    const step = stepOf(request, tokenId, logits, this.eos, this.contextLength, prompt);
    request.steps.push(step);
    if (step.finishReason !== null) this.finish(request, step.finishReason);
  }
}
