// The messages between the HTTP thread and the decoder's own thread: requests and aborts one way,
// one batch of flat records per engine turn the other.
import type { TokenLogprob } from "../../../src/generation/logprobs";
import type { GenerationConfig } from "../../manifests";
import type { EngineMetricName } from "../../metrics/vllm-metrics";
import type { SessionSettings } from "../onnx-session";
import type { DecoderLimits } from "./limits";
import type { GenerationParams } from "./generation-params";
import type { TokenizerFile } from "./vocabulary";

export interface DecoderWorkerInit {
  modelName: string;
  generation: GenerationConfig;
  limits: DecoderLimits;
  settings: SessionSettings;
  /** The graph decode steps run (rewritten or as exported). */
  stepGraph: Uint8Array;
  /** The graph prefills run; null = the step graph's session. */
  prefillGraph: Uint8Array | null;
  splitAttention: boolean;
  /**
   * The model's tokenizer, for structured outputs' token bytes (absent: the engine serves none).
   */
  tokenizer?: TokenizerFile;
  /** The labels the HTTP thread's metrics use for this engine (records with them say null). */
  labels: Readonly<Record<string, string>>;
  metricNames: readonly EngineMetricName[];
}

export type ToEngine =
  /** `arrivedAt`: epoch milliseconds (performance.timeOrigin + now), comparable across threads. */
  | { type: "submit"; id: number; params: GenerationParams; arrivedAt: number }
  | { type: "abort"; id: number }
  /** Exit between runs (terminating the thread inside onnxruntime's run aborts the process). */
  | { type: "stop" };

export const STEP = 0;
export const END = 1;
export const FAIL = 2;
export const ADMITTED = 3;
export const INC = 4;
export const OBSERVE = 5;

export type EngineRecord =
  /**
   * cachedTokens on the first step only (null when a logprob follows without it); logprob when the
   * request asked; promptLogprobs on the first step of a request that asked for them (echo).
   */
  | [
      typeof STEP,
      id: number,
      tokenId: number,
      finishReason: "stop" | "length" | null,
      stopReason: number | null,
      cachedTokens?: number | null,
      logprob?: TokenLogprob,
      promptLogprobs?: Array<TokenLogprob | null>,
    ]
  | [typeof END, id: number]
  /**
   * `status` and `field`: a client's error (below 500) the HTTP thread answers as it is; without
   * them, a 500.
   */
  | [typeof FAIL, id: number, error: string, status?: number, field?: string]
  | [typeof ADMITTED, id: number]
  | [
      typeof INC | typeof OBSERVE,
      metric: EngineMetricName,
      value: number,
      labels: Readonly<Record<string, string>> | null,
    ];

/** `structuredOutputs`: whether the engine has the token bytes structured outputs need. */
export type FromEngine =
  | { type: "ready"; structuredOutputs: boolean }
  | { type: "failed"; error: string }
  | { type: "records"; records: EngineRecord[]; kvCacheBytes: number; prefixCacheBytes: number };
