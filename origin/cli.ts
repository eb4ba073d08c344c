// The origin's command line: each flag sets the ORIGIN_* variable of the same name (a flag
// wins over the environment), and --help lists them all. The API key is environment-only,
// so it never shows in a process list.

interface Flag {
  flag: string;
  env: string;
  value: string;
  help: string;
}

export const FLAGS: readonly Flag[] = [
  { flag: "--host", env: "ORIGIN_HOST", value: "127.0.0.1", help: "address to listen on" },
  { flag: "--port", env: "ORIGIN_PORT", value: "8788", help: "port; 0 = any free one (printed)" },
  { flag: "--models", env: "ORIGIN_MODELS", value: "models", help: "folder of model folders" },
  {
    flag: "--execution-providers",
    env: "ORIGIN_EXECUTION_PROVIDERS",
    value: "cuda,cpu | cpu",
    help: "onnxruntime EPs in preference order (default: cuda where installed)",
  },
  {
    flag: "--intra-op-threads",
    env: "ORIGIN_INTRA_OP_THREADS",
    value: "1",
    help: "threads per onnxruntime session",
  },
  { flag: "--max-batch", env: "ORIGIN_MAX_BATCH", value: "64", help: "requests decoding together" },
  {
    flag: "--max-waiting",
    env: "ORIGIN_MAX_WAITING",
    value: "256",
    help: "requests queued for a row; beyond, 429",
  },
  {
    flag: "--prefill-tokens-per-step",
    env: "ORIGIN_PREFILL_TOKENS_PER_STEP",
    value: "2048",
    help: "prompt tokens prefilled between two decode steps",
  },
  {
    flag: "--generation-graph",
    env: "ORIGIN_GENERATION_GRAPH",
    value: "(manifest's)",
    help: "graph of a text-generation manifest to run",
  },
  {
    flag: "--max-body-bytes",
    env: "ORIGIN_MAX_BODY_BYTES",
    value: "67108864",
    help: "largest request body",
  },
  {
    flag: "--split-attention",
    env: "ORIGIN_SPLIT_ATTENTION",
    value: "true",
    help: "rewrite decoder graphs so steps copy no cache",
  },
  {
    flag: "--stream-interval",
    env: "ORIGIN_STREAM_INTERVAL",
    value: "1",
    help: "tokens per streamed chunk after the first",
  },
  {
    flag: "--prefix-cache-mib",
    env: "ORIGIN_PREFIX_CACHE_MIB",
    value: "64",
    help: "MiB of prefix-cache keys/values per decoder; 0 = off",
  },
  {
    flag: "--prefix-cache-admit",
    env: "ORIGIN_PREFIX_CACHE_ADMIT",
    value: "seen-before",
    help: "blocks kept: seen-before (first block seen before) or always (vLLM's)",
  },
  {
    flag: "--decoder-thread",
    env: "ORIGIN_DECODER_THREAD",
    value: "true",
    help: "run each decoder on a worker thread of its own",
  },
  {
    flag: "--drain-timeout",
    env: "ORIGIN_DRAIN_TIMEOUT_MS",
    value: "30000",
    help: "ms running requests get to finish after SIGTERM",
  },
  {
    flag: "--fault-chunk-delay",
    env: "ORIGIN_FAULT_CHUNK_DELAY_MS",
    value: "0",
    help: "fault injection: ms each streamed completion chunk is held back",
  },
  {
    flag: "--fault-stall",
    env: "ORIGIN_FAULT_STALL_MS",
    value: "0",
    help: "fault injection: ms a stalled completion waits before its first chunk",
  },
  {
    flag: "--fault-stall-rate",
    env: "ORIGIN_FAULT_STALL_RATE",
    value: "0",
    help: "fault injection: share (0-1) of completions that stall",
  },
  {
    flag: "--fault-prefill-us",
    env: "ORIGIN_FAULT_PREFILL_US_PER_TOKEN",
    value: "0",
    help: "fault injection: µs each prompt token a prefill computes holds the decoder",
  },
];

export const USAGE = [
  "Usage: node dist/server.js [--flag value | --flag=value]...",
  "",
  "Each flag sets the environment variable beside it (the flag wins); ORIGIN_API_KEY is",
  "environment-only (Bearer key; required to listen beyond loopback).",
  "",
  ...FLAGS.map(
    ({ flag, env, value, help }) => `  ${flag.padEnd(27)}${env.padEnd(32)}${help} [${value}]`,
  ),
  `  ${"--help".padEnd(59)}this text`,
].join("\n");

/** The environment with the flags of `argv` folded in, or "help"; throws on an unknown flag. */
export function applyFlags(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): NodeJS.ProcessEnv | "help" {
  const out = { ...env };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") return "help";
    const [name, inline] = arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined];
    const flag = FLAGS.find((candidate) => candidate.flag === name);
    if (flag === undefined) throw new Error(`Unknown argument ${arg} (see --help)`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${name} needs a value (see --help)`);
    out[flag.env] = value;
  }
  return out;
}
