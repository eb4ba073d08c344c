// The origin's configuration, read once from its environment (command-line flags are
// folded into it first: cli.ts); invalid values stop the process at start.
import { z } from "zod";
import type { Faults } from "./http/faults";

const LOOPBACK = ["127.0.0.1", "::1", "localhost"];

const list = (value: string) =>
  value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
const integer = (fallback: number, min: number) =>
  z.coerce.number().int().min(min).default(fallback);

const ConfigSchema = z.object({
  ORIGIN_HOST: z.string().min(1).default("127.0.0.1"),
  /** 0 = any free port (the chosen one is printed). */
  ORIGIN_PORT: integer(8788, 0).pipe(z.number().max(65535)),
  ORIGIN_API_KEY: z.string().default(""),
  ORIGIN_MODELS: z.string().min(1).default("models"),
  /**
   * Preference order, e.g. "cuda,cpu"; default: cuda where this onnxruntime-node has it, else cpu.
   */
  ORIGIN_EXECUTION_PROVIDERS: z.string().optional(),
  /** Threads per onnxruntime session: one per engine shares a small machine fairly. */
  ORIGIN_INTRA_OP_THREADS: integer(1, 1),
  /** Requests decoding together (rows of one decode step). */
  ORIGIN_MAX_BATCH: integer(64, 1),
  /** Requests waiting for a row; beyond this, 429 with Retry-After. */
  ORIGIN_MAX_WAITING: integer(256, 0),
  /** Prompt tokens prefilled between two decode steps (at least one prompt always is). */
  ORIGIN_PREFILL_TOKENS_PER_STEP: integer(2048, 1),
  /**
   * Which graph of a text-generation manifest to run, overriding generation.graph (e.g.
   * decoder-fp32).
   */
  ORIGIN_GENERATION_GRAPH: z.string().optional(),
  ORIGIN_MAX_BODY_BYTES: integer(64 * 1024 * 1024, 1),
  /** "false" runs decoder graphs as exported (presents = the whole cache, copied every step). */
  ORIGIN_SPLIT_ATTENTION: z.enum(["true", "false"]).default("true"),
  /** Tokens per streamed completion chunk after the first (vLLM's --stream-interval). */
  ORIGIN_STREAM_INTERVAL: integer(1, 1),
  /** MiB of keys/values each decoder keeps for automatic prefix caching; 0 turns it off. */
  ORIGIN_PREFIX_CACHE_MIB: integer(64, 0),
  /**
   * Which prompts' blocks the prefix cache keeps: "seen-before" (a prompt whose first block was
   * seen before: TinyLFU's doorkeeper) or "always" (every computed block, as vLLM's paged cache).
   */
  ORIGIN_PREFIX_CACHE_ADMIT: z.enum(["seen-before", "always"]).default("seen-before"),
  /** "false" runs decoder engines on the HTTP thread (their steps then stall its sockets). */
  ORIGIN_DECODER_THREAD: z.enum(["true", "false"]).default("true"),
  /** On SIGTERM/SIGINT: how long running requests may finish before they are cut. */
  ORIGIN_DRAIN_TIMEOUT_MS: integer(30_000, 0),
  /** Fault injection (http/faults.ts): ms each streamed completion chunk is held back. */
  ORIGIN_FAULT_CHUNK_DELAY_MS: integer(0, 0),
  /** Fault injection: ms a stalled completion waits before its first chunk. */
  ORIGIN_FAULT_STALL_MS: integer(0, 0),
  /** Fault injection: the share of completions (0–1) that stall. */
  ORIGIN_FAULT_STALL_RATE: z.coerce.number().min(0).max(1).default(0),
  /** Fault injection: µs each prompt token a prefill computes holds the decoder longer. */
  ORIGIN_FAULT_PREFILL_US_PER_TOKEN: integer(0, 0),
});

export interface OriginConfig {
  host: string;
  port: number;
  apiKey: string;
  modelsDir: string;
  executionProviders: string[] | undefined;
  intraOpThreads: number;
  maxBatch: number;
  maxWaiting: number;
  prefillTokensPerStep: number;
  generationGraph: string | undefined;
  maxBodyBytes: number;
  splitAttention: boolean;
  /** Bytes of keys/values each decoder keeps for automatic prefix caching (0: off). */
  prefixCacheBytes: number;
  /** Whether the prefix cache keeps every prompt's blocks (as vLLM), not only those seen before. */
  prefixCacheAdmitAll: boolean;
  /** Whether each decoder engine runs on a worker thread of its own. */
  decoderThread: boolean;
  /** Tokens per streamed completion chunk after the first (vLLM's --stream-interval). */
  streamInterval: number;
  /** On SIGTERM/SIGINT: milliseconds running requests get to finish before they are cut. */
  drainTimeoutMs: number;
  /** Injected faults (tests and benchmarks of the edge's pools); all zero by default. */
  faults: Faults;
  /** Injected: µs each prompt token a prefill computes holds the decoder (a larger model's). */
  prefillFaultUsPerToken: number;
}

/** Reads and checks the configuration; throws with every problem listed. */
export function readConfig(env: NodeJS.ProcessEnv): OriginConfig {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    throw new Error(
      "Invalid origin configuration: " +
        `${parsed.error.issues
          .map((issue) => `${issue.path.join(".")}: ${issue.message}`)
          .join("; ")}`,
    );
  }
  const c = parsed.data;
  if (!c.ORIGIN_API_KEY && !LOOPBACK.includes(c.ORIGIN_HOST)) {
    throw new Error(`Refusing to listen on ${c.ORIGIN_HOST} without ORIGIN_API_KEY`);
  }
  return {
    host: c.ORIGIN_HOST,
    port: c.ORIGIN_PORT,
    apiKey: c.ORIGIN_API_KEY,
    modelsDir: c.ORIGIN_MODELS,
    executionProviders:
      c.ORIGIN_EXECUTION_PROVIDERS === undefined ? undefined : list(c.ORIGIN_EXECUTION_PROVIDERS),
    intraOpThreads: c.ORIGIN_INTRA_OP_THREADS,
    maxBatch: c.ORIGIN_MAX_BATCH,
    maxWaiting: c.ORIGIN_MAX_WAITING,
    prefillTokensPerStep: c.ORIGIN_PREFILL_TOKENS_PER_STEP,
    generationGraph: c.ORIGIN_GENERATION_GRAPH,
    maxBodyBytes: c.ORIGIN_MAX_BODY_BYTES,
    splitAttention: c.ORIGIN_SPLIT_ATTENTION === "true",
    prefixCacheBytes: c.ORIGIN_PREFIX_CACHE_MIB * 1024 * 1024,
    prefixCacheAdmitAll: c.ORIGIN_PREFIX_CACHE_ADMIT === "always",
    decoderThread: c.ORIGIN_DECODER_THREAD === "true",
    streamInterval: c.ORIGIN_STREAM_INTERVAL,
    drainTimeoutMs: c.ORIGIN_DRAIN_TIMEOUT_MS,
    faults: {
      chunkDelayMs: c.ORIGIN_FAULT_CHUNK_DELAY_MS,
      stallMs: c.ORIGIN_FAULT_STALL_MS,
      stallRate: c.ORIGIN_FAULT_STALL_RATE,
    },
    prefillFaultUsPerToken: c.ORIGIN_FAULT_PREFILL_US_PER_TOKEN,
  };
}
