// The edge's origin pools side by side in one run (src/runtime/origin/): three reference origins
// on loopback (prefix caches on, fresh processes per cell), the edge's generation runtime in
// Node over them, a seeded multi-turn workload (each turn resends the history, as chat clients
// do; most conversations share one hot system prompt, the skew). Cells:
//   affinity / round-robin   prefix-cache hit rate (the origins' vllm:prefix_cache_hits ÷
//                            queries), time to first token, in-flight balance across replicas
//   kill                     affinity, one replica SIGKILLed halfway: client-visible failures,
//                            and every answer compared id for id with the affinity cell's
//   stall / stall+detect     one replica stalls 2 s before the first chunk on 5% of requests:
//                            p99 TTFT with the default first-token timeout, then with 1 s
// and the routing decision's CPU per request. Affinity and round-robin run in interleaved rounds
// (fresh origins each), so the machine's noise falls on both; per turn, the tokens each policy
// left to compute and its TTFT; per cell, the origins' prefill runs and decode steps. Usage: npx
// tsx scripts/bench-origin-pool.ts [--conversations 240] [--turns 4] [--concurrency 24]
// [--rate 0] [--think 1000] [--chunk-delay 2] [--rounds 3] [--system 192] [--user 24]
// [--answer 16] [--prefill-us 0] [--prefix-cache-mib 64] [--prefix-cache-admit seen-before]
// [--graph decoder] [--routing-only]
// (--concurrency: clients, each sending a conversation's turns back to back (a closed loop);
// --rate: conversations starting per second instead (Poisson, an open loop as vLLM's
// benchmark_serving.py --request-rate), each turn --think ms (mean, exponential) after the
// last answer; --user: each turn's user text is that many tokens and up to 15 more; --answer:
// greedy tokens per answer; --prefill-us: each prompt token an origin computes holds its
// decoder that many µs longer, as a larger model's prefill on a GPU; --prefix-cache-admit always:
// the origins keep every prompt's blocks, as vLLM does, not only those seen before; --routing-only:
// the affinity and round-robin rounds alone)
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { GREEDY } from "../src/generation/sampling-params";
import type { GenerationRequest } from "../src/runtime";
import { createBreakers } from "../src/runtime/origin/circuit-breaker";
import type { Replica } from "../src/runtime/origin/pool-config";
import { blockHashes, type RoutingPolicy } from "../src/runtime/origin/replica-choice";
import { createFleet, type Fleet } from "../src/runtime/origin/replica-pool";
import { createVllmRuntime } from "../src/runtime/origin/vllm-runtime";
import { type Conversation, workload } from "./lib/chat-workload";
import { originMetric } from "./lib/completion-stream.mjs";
import { startOrigin } from "./lib/origin.mjs";
import { perTurn, type Sample } from "./lib/pool-report";
import { percentile } from "./lib/stats.mjs";

const { values: options } = parseArgs({
  options: {
    conversations: { type: "string", default: "240" },
    turns: { type: "string", default: "4" },
    concurrency: { type: "string", default: "24" },
    "chunk-delay": { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
    system: { type: "string", default: "192" },
    user: { type: "string", default: "24" },
    answer: { type: "string", default: "16" },
    "prefill-us": { type: "string", default: "0" },
    "prefix-cache-mib": { type: "string", default: "64" },
    "prefix-cache-admit": { type: "string", default: "seen-before" },
    graph: { type: "string", default: "decoder" },
    "routing-only": { type: "boolean", default: false },
    rate: { type: "string", default: "0" },
    think: { type: "string", default: "1000" },
  },
});
const CONVERSATIONS = Number(options.conversations);
const TURNS = Number(options.turns);
const CONCURRENCY = Number(options.concurrency);
/** Each origin holds each chunk this long (a token's pace on a GPU), so streams overlap. */
const CHUNK_DELAY = options["chunk-delay"]!;
const ANSWER_TOKENS = Number(options.answer);
const ROUNDS = Number(options.rounds);
const SYSTEM_TOKENS = Number(options.system);
const USER_TOKENS = Number(options.user);
/** Conversations starting per second (Poisson; 0: a closed loop of CONCURRENCY clients). */
const RATE = Number(options.rate);
/** Mean ms a user reads and types between an answer and the next turn (exponential). */
const THINK_MS = Number(options.think);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

type Started = Awaited<ReturnType<typeof startOrigin>>;

/** SIGKILLs the origin's server (startOrigin's process is tsx, its parent). */
function kill(origin: Started): void {
  const pid = origin.process.pid!;
  for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(/\s+/))
    if (child) process.kill(Number(child), "SIGKILL");
  origin.process.kill("SIGKILL");
}

interface Cell {
  policy: RoutingPolicy;
  firstTokenTimeoutMs?: number;
  /** Environment of the third origin (a slow one). */
  third?: Record<string, string>;
  killHalfway?: boolean;
  /** The decoder graph (default --graph: the INT8 one, whose prefill costs as on a server). */
  graph?: string;
}

interface Outcome {
  ttfts: number[];
  samples: Sample[];
  answers: Map<string, number[]>;
  failedBeforeFirstToken: number;
  failedAfter: number;
  hitRate: number;
  /** Requests in flight on the replica when it was killed. */
  inFlightAtKill: number;
  reasons: Record<string, number>;
  balance: { busiestOverQuietest: number; meanInFlight: number[]; served: number[] };
  /** The origins' own means per request (ms): queued, in prefill, first token. */
  atOrigins: { queue: number; prefill: number; ttft: number };
  /** The origins' engines, summed: prefill runs and requests, decode steps (ms, CPU ms). */
  engines: Record<string, number>;
}

async function run(cell: Cell, conversations: Conversation[]): Promise<Outcome> {
  const common = {
    ORIGIN_GENERATION_GRAPH: cell.graph ?? options.graph!,
    ORIGIN_FAULT_CHUNK_DELAY_MS: CHUNK_DELAY,
    ORIGIN_FAULT_PREFILL_US_PER_TOKEN: options["prefill-us"]!,
    ORIGIN_PREFIX_CACHE_MIB: options["prefix-cache-mib"]!,
    ORIGIN_PREFIX_CACHE_ADMIT: options["prefix-cache-admit"]!,
  };
  const origins = await Promise.all([
    startOrigin(common),
    startOrigin(common),
    startOrigin({ ...common, ...cell.third }),
  ]);
  const replicas: Replica[] = origins.map((origin) => ({ url: origin.url, weight: 1 }));
  const breakers = createBreakers();
  const fleet: Fleet = createFleet({ breakers, policy: cell.policy });
  const runtime = createVllmRuntime({
    model: { name: "tiny-llm" },
    contextLength: 512,
    origin: {
      url: replicas[0]!.url,
      replicas,
      apiKey: undefined,
      timeoutMs: 10_000,
      ...(cell.firstTokenTimeoutMs ? { firstTokenTimeoutMs: cell.firstTokenTimeoutMs } : {}),
      idleTimeoutMs: 2_000,
    },
    breakers,
    fleet,
  });
  const outcome: Outcome = {
    ttfts: [],
    samples: [],
    answers: new Map(),
    failedBeforeFirstToken: 0,
    failedAfter: 0,
    hitRate: 0,
    inFlightAtKill: 0,
    reasons: {},
    balance: { busiestOverQuietest: 0, meanInFlight: [], served: [] },
    atOrigins: { queue: 0, prefill: 0, ttft: 0 },
    engines: {},
  };
  const sums = replicas.map(() => 0);
  let samples = 0;
  const sampler = setInterval(() => {
    const now = fleet.inFlight();
    replicas.forEach((replica, i) => (sums[i]! += now[replica.url] ?? 0));
    samples += 1;
  }, 2);
  const total = conversations.length * TURNS;
  let started = 0;
  const send = async (index: number, turn: number, history: number[]) => {
    history.push(...conversations[index]!.users[turn]!);
    started += 1;
    if (cell.killHalfway && started === Math.floor(total / 2)) {
      outcome.inFlightAtKill = fleet.inFlight()[replicas[0]!.url] ?? 0;
      kill(origins[0]!);
    }
    const request: GenerationRequest = {
      promptIds: [...history],
      maxTokens: ANSWER_TOKENS,
      sampling: GREEDY,
      stopTokenIds: [],
      ignoreEos: true,
    };
    const begun = performance.now();
    const ids: number[] = [];
    const sample: Sample = { turn, prompt: history.length, cached: 0, ttft: 0 };
    try {
      for await (const step of runtime.generation!.generate(
        request,
        new AbortController().signal,
      )) {
        if (ids.length === 0 && step.tokenIds.length > 0) {
          sample.ttft = performance.now() - begun;
          outcome.ttfts.push(sample.ttft);
        }
        if (step.cachedTokens !== undefined) sample.cached = step.cachedTokens;
        ids.push(...step.tokenIds);
      }
    } catch {
      if (ids.length === 0) outcome.failedBeforeFirstToken += 1;
      else outcome.failedAfter += 1;
      return false;
    }
    outcome.samples.push(sample);
    outcome.answers.set(`${index}/${turn}`, ids);
    history.push(...ids);
    return true;
  };
  // Closed loop: CONCURRENCY clients, each sending a conversation's turns back to back. Open
  // loop (--rate): conversations start at their seeded arrival times, each turn after the
  // previous answer and the user's seeded think time, whatever the origins' pace.
  let next = 0;
  const converse = async () => {
    for (let index = next++; index < conversations.length; index = next++) {
      const history = [...conversations[index]!.system];
      for (let turn = 0; turn < TURNS; turn += 1) if (!(await send(index, turn, history))) break;
    }
  };
  const arrive = async (index: number, begun: number) => {
    const { arrival, thinks, system } = conversations[index]!;
    const history = [...system];
    await sleep(arrival - (performance.now() - begun));
    for (let turn = 0; turn < TURNS; turn += 1) {
      if (turn > 0) await sleep(thinks[turn - 1]!);
      if (!(await send(index, turn, history))) break;
    }
  };
  const before = await Promise.all(
    origins.map(async (origin) => ({
      hits: await originMetric(origin.url, "vllm:prefix_cache_hits_total"),
      queries: await originMetric(origin.url, "vllm:prefix_cache_queries_total"),
    })),
  );
  const begun = performance.now();
  await Promise.all(
    RATE > 0
      ? conversations.map((_, index) => arrive(index, begun))
      : Array.from({ length: CONCURRENCY }, converse),
  );
  clearInterval(sampler);
  let hits = 0;
  let queries = 0;
  const served: number[] = [];
  for (const [i, origin] of origins.entries()) {
    const alive = !(cell.killHalfway && i === 0);
    hits += alive
      ? (await originMetric(origin.url, "vllm:prefix_cache_hits_total")) - before[i]!.hits
      : 0;
    queries += alive
      ? (await originMetric(origin.url, "vllm:prefix_cache_queries_total")) - before[i]!.queries
      : 0;
    served.push(alive ? await originMetric(origin.url, "vllm:request_success_total") : Number.NaN);
  }
  outcome.hitRate = queries === 0 ? 0 : hits / queries;
  const live = origins.filter((_, i) => !(cell.killHalfway && i === 0));
  const mean = async (name: string) => {
    const [sum, count] = [0, 0];
    const sums = await Promise.all(live.map((origin) => originMetric(origin.url, `${name}_sum`)));
    const counts = await Promise.all(
      live.map((origin) => originMetric(origin.url, `${name}_count`)),
    );
    const total = sums.reduce((a, b) => a + b, sum);
    return (
      (1000 * total) /
      Math.max(
        1,
        counts.reduce((a, b) => a + b, count),
      )
    );
  };
  outcome.atOrigins = {
    queue: await mean("vllm:request_queue_time_seconds"),
    prefill: await mean("vllm:request_prefill_time_seconds"),
    ttft: await mean("vllm:time_to_first_token_seconds"),
  };
  const summed = async (name: string) =>
    (await Promise.all(live.map((origin) => originMetric(origin.url, name)))).reduce(
      (a, b) => a + b,
      0,
    );
  const [runs, prefills, prefillSeconds, prefillCpu, steps, rows, stepSeconds, stepCpu] =
    await Promise.all(
      [
        "origin_prefill_runs_total",
        "vllm:request_prefill_time_seconds_count",
        "vllm:request_prefill_time_seconds_sum",
        "origin_prefill_cpu_seconds_total",
        "origin_decode_steps_total",
        "origin_decode_rows_total",
        "origin_decode_step_seconds_sum",
        "origin_decode_step_cpu_seconds_total",
      ].map(summed),
    );
  outcome.engines = {
    "prefill runs": runs!,
    "requests per run": prefills! / runs!,
    "run ms": (1000 * prefillSeconds!) / prefills!,
    "run CPU ms": (1000 * prefillCpu!) / runs!,
    "decode steps": steps!,
    "rows per step": rows! / steps!,
    "step ms": (1000 * stepSeconds!) / steps!,
    "step CPU ms": (1000 * stepCpu!) / steps!,
  };
  outcome.reasons = fleet.reasons();
  const means = sums.map((sum) => sum / Math.max(1, samples));
  const alive = means.filter((_, i) => !(cell.killHalfway && i === 0));
  outcome.balance = {
    busiestOverQuietest: Math.max(...alive) / Math.max(1e-9, Math.min(...alive)),
    meanInFlight: means,
    served,
  };
  await Promise.all(origins.map((origin) => origin.stop()));
  return outcome;
}

/** The routing decision alone: µs of CPU per request (choose + served), 3 replicas. */
function routingCost(conversations: Conversation[]): { chooseUs: number; servedUs: number } {
  const fleet = createFleet({ breakers: createBreakers(), policy: "affinity" });
  const replicas: Replica[] = ["http://a:1", "http://b:1", "http://c:1"].map((url) => ({
    url,
    weight: 1,
  }));
  const prompts = conversations.map(({ system, users }) => [...system, ...users.flat()]);
  const rounds = 20_000;
  let cpu = process.cpuUsage();
  for (let i = 0; i < rounds; i += 1)
    fleet.choose(replicas, prompts[i % prompts.length]!, "/health");
  const chooseUs = process.cpuUsage(cpu).user / rounds;
  cpu = process.cpuUsage();
  for (let i = 0; i < rounds; i += 1) fleet.served("http://a:1", prompts[i % prompts.length]!);
  return { chooseUs, servedUs: process.cpuUsage(cpu).user / rounds };
}

/**
 * The hit rate a single replica with an unbounded cache would reach on these prompts (in the
 * order of the affinity cell's answers): whole blocks already seen as a prompt's prefix, or as
 * a finished request's prompt and answer but its last token (the blocks the origin keeps).
 */
function idealHitRate(conversations: Conversation[], answers: Map<string, number[]>): number {
  const seen = new Set<number>();
  let hits = 0;
  let tokens = 0;
  for (let turn = 0; turn < TURNS; turn += 1)
    conversations.forEach(({ system, users }, index) => {
      const prompt = [...system];
      for (let t = 0; t <= turn; t += 1) {
        prompt.push(...users[t]!);
        if (t < turn) prompt.push(...(answers.get(`${index}/${t}`) ?? []));
      }
      const hashes = blockHashes(prompt);
      let reused = 0;
      while (reused < hashes.length && seen.has(hashes[reused]!)) reused += 1;
      hits += reused * 16;
      tokens += prompt.length;
      const answer = answers.get(`${index}/${turn}`) ?? [];
      for (const hash of blockHashes([...prompt, ...answer.slice(0, -1)])) seen.add(hash);
    });
  return hits / tokens;
}

const conversations = workload({
  conversations: CONVERSATIONS,
  turns: TURNS,
  systemTokens: SYSTEM_TOKENS,
  userTokens: USER_TOKENS,
  rate: RATE,
  thinkMs: THINK_MS,
});
const stalls = { ORIGIN_FAULT_STALL_MS: "2000", ORIGIN_FAULT_STALL_RATE: "0.05" };
const row = (name: string, outcome: Outcome) => ({
  cell: name,
  requests: outcome.answers.size,
  "hit rate": outcome.hitRate.toFixed(3),
  "TTFT p50 ms": percentile(outcome.ttfts, 50).toFixed(1),
  "TTFT p99 ms": percentile(outcome.ttfts, 99).toFixed(0),
  "TTFT max ms": Math.max(...outcome.ttfts).toFixed(0),
  "in-flight busiest/quietest": outcome.balance.busiestOverQuietest.toFixed(2),
  "origin queue / prefill / TTFT ms (mean)": [
    outcome.atOrigins.queue,
    outcome.atOrigins.prefill,
    outcome.atOrigins.ttft,
  ]
    .map((value) => value.toFixed(1))
    .join(" / "),
  "mean in-flight": outcome.balance.meanInFlight.map((value) => value.toFixed(1)).join(" / "),
  "failed before / after 1st token": `${outcome.failedBeforeFirstToken} / ${outcome.failedAfter}`,
});
const median = (values: number[]) => percentile(values, 50);

const loadStart = loadavg();
// Affinity and round-robin in interleaved rounds (the order alternating), fresh origins each.
const rows: ReturnType<typeof row>[] = [];
const engineRows: Record<string, string | number>[] = [];
const ratios = { hitRate: [] as number[], ttftP50: [] as number[] };
const pooled = { affinity: [] as number[], roundRobin: [] as number[] };
const samples = { affinity: [] as Sample[], roundRobin: [] as Sample[] };
let reference: Outcome | undefined;
for (let round = 0; round < ROUNDS; round += 1) {
  const order: RoutingPolicy[] =
    round % 2 === 0 ? ["affinity", "round-robin"] : ["round-robin", "affinity"];
  const outcomes = new Map<RoutingPolicy, Outcome>();
  for (const policy of order) outcomes.set(policy, await run({ policy }, conversations));
  const affinity = outcomes.get("affinity")!;
  const roundRobin = outcomes.get("round-robin")!;
  reference ??= affinity;
  rows.push(row(`affinity, round ${round + 1}`, affinity));
  rows.push(row(`round-robin, round ${round + 1}`, roundRobin));
  for (const [name, outcome] of [
    ["affinity", affinity],
    ["round-robin", roundRobin],
  ] as const)
    engineRows.push({
      cell: `${name}, round ${round + 1}`,
      ...Object.fromEntries(
        Object.entries(outcome.engines).map(([key, value]) => [key, Number(value.toFixed(2))]),
      ),
    });
  ratios.hitRate.push(affinity.hitRate / roundRobin.hitRate);
  ratios.ttftP50.push(percentile(affinity.ttfts, 50) / percentile(roundRobin.ttfts, 50));
  pooled.affinity.push(...affinity.ttfts);
  pooled.roundRobin.push(...roundRobin.ttfts);
  samples.affinity.push(...affinity.samples);
  samples.roundRobin.push(...roundRobin.samples);
}
const loadBefore = loadavg();
// The kill is compared with a run without it on the FP32 graph: on INT8, a prompt computed
// after a cached prefix may differ where two tokens are nearly tied (docs/origin-engine.md).
const faults = options["routing-only"] ? undefined : await faultCells();
console.table(rows);
console.table(perTurn(samples, TURNS));
console.table(engineRows);
console.log(
  `affinity ÷ round-robin per round: hit rate ${ratios.hitRate.map((r) => r.toFixed(2)).join(", ")}` +
    ` (median ${median(ratios.hitRate).toFixed(2)}×); TTFT p50 ` +
    `${ratios.ttftP50.map((r) => r.toFixed(2)).join(", ")} (median ${median(ratios.ttftP50).toFixed(2)}×)`,
);
console.log(
  `TTFT p50 over all rounds: affinity ${median(pooled.affinity).toFixed(1)} ms, round-robin ` +
    `${median(pooled.roundRobin).toFixed(1)} ms ` +
    `(${(median(pooled.affinity) / median(pooled.roundRobin)).toFixed(2)}×)`,
);
console.log(
  `ideal hit rate (one unbounded cache): ${idealHitRate(conversations, reference!.answers).toFixed(3)}`,
);
console.log("choices by reason: affinity", reference!.reasons);
if (faults !== undefined) {
  console.log("kill: choices by reason", faults.killed.reasons);
  let same = 0;
  for (const [key, ids] of faults.killed.answers)
    if (JSON.stringify(ids) === JSON.stringify(faults.unkilled.answers.get(key))) same += 1;
  console.log(
    `kill: ${faults.killed.inFlightAtKill} requests in flight on the killed replica; ` +
      `${same} of ${faults.killed.answers.size} answers id for id as in a run without the kill`,
  );
}
console.log("routing decision (µs CPU per request, Node):", routingCost(conversations));
const load = (values: number[]) => values.map((value) => value.toFixed(2)).join(" ");
console.log(
  `load average (1, 5, 15 min): at start ${load(loadStart)}, after the rounds ` +
    `${load(loadBefore)}, at the end ${load(loadavg())}`,
);

/** The kill and stall cells, their rows added to the table. */
async function faultCells(): Promise<{ unkilled: Outcome; killed: Outcome }> {
  const unkilled = await run({ policy: "affinity", graph: "decoder-fp32" }, conversations);
  const killed = await run(
    { policy: "affinity", killHalfway: true, graph: "decoder-fp32" },
    conversations,
  );
  rows.push(row("no kill (affinity, FP32)", unkilled));
  rows.push(row("kill (affinity, FP32)", killed));
  const stalled = await run({ policy: "affinity", third: stalls }, conversations);
  rows.push(row("stall, first-token timeout 60 s", stalled));
  const detected = await run(
    { policy: "affinity", third: stalls, firstTokenTimeoutMs: 1_000 },
    conversations,
  );
  rows.push(row("stall, first-token timeout 1 s", detected));
  return { unkilled, killed };
}
