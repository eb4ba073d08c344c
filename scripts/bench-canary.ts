// The canary's cost at the edge, side by side in one run: the replica choice alone against the
// choice plus the canary's part (sticky hash, split, version order, rollback check and record),
// in interleaved rounds, as µs of CPU per request and their ratio. `npm run bench:canary`.
import { createBreakers } from "../src/runtime/origin/circuit-breaker";
import {
  type CanaryConfig,
  splitVersion,
  stickyHash,
  versionOrder,
} from "../src/runtime/origin/canary-config";
import { createCanaryMonitor } from "../src/runtime/origin/canary-monitor";
import type { Replica } from "../src/runtime/origin/pool-config";
import { createFleet } from "../src/runtime/origin/replica-pool";

const replicas: Replica[] = [
  { url: "http://a:1", weight: 1, version: "v1" },
  { url: "http://b:1", weight: 1, version: "v1" },
  { url: "http://c:1", weight: 1, version: "v2" },
];
const canary: CanaryConfig = {
  stable: "v1",
  canary: "v2",
  weight: 10,
  maxErrorRate: 0.05,
  maxLatencyMs: 10_000,
  sticky: "conversation",
  windowSeconds: 60,
  minRequests: 20,
};
// 330-token prompts (as bench-origin-pool's multi-turn ones), 200 conversations.
let seed = 7;
const next = () => {
  seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
  return seed;
};
const prompts = Array.from({ length: 200 }, () => Array.from({ length: 330 }, () => next() % 4096));
const conversationKeys = prompts.map((_, i) => `[{"role":"user","content":"conversation ${i}"}]`);
const ROUNDS = 20_000;

function plain(): number {
  const fleet = createFleet({ breakers: createBreakers() });
  const cpu = process.cpuUsage();
  for (let i = 0; i < ROUNDS; i += 1) fleet.choose(replicas, prompts[i % prompts.length]!, "/h");
  return process.cpuUsage(cpu).user / ROUNDS;
}

function withCanary(): number {
  const fleet = createFleet({ breakers: createBreakers() });
  const monitor = createCanaryMonitor({ log: () => undefined });
  const cpu = process.cpuUsage();
  for (let i = 0; i < ROUNDS; i += 1) {
    const promptIds = prompts[i % prompts.length]!;
    const ranked = fleet.choose(replicas, promptIds, "/h");
    const versionOf = new Map(replicas.map((replica) => [replica.url, replica.version]));
    const version = splitVersion(
      stickyHash(canary, { conversationKey: conversationKeys[i % prompts.length], promptIds }),
      canary,
    );
    const order = versionOrder(ranked, replicas, version, canary, monitor.rolledBack("m", canary));
    monitor.record("m", canary, versionOf.get(order[0]!)!, true, 100);
  }
  return process.cpuUsage(cpu).user / ROUNDS;
}

const ratios: number[] = [];
const rows: string[] = [];
for (let round = 0; round < 5; round += 1) {
  const [a, b] = [plain(), withCanary()];
  ratios.push(b / a);
  rows.push(`round ${round + 1}: choice ${a.toFixed(2)} µs, with canary ${b.toFixed(2)} µs`);
}
const median = [...ratios].sort((x, y) => x - y)[2]!;
console.log(rows.join("\n"));
console.log(`with canary ÷ choice alone, median of 5 rounds: ${median.toFixed(2)}×`);
