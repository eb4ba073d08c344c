#!/usr/bin/env node
// What `wrangler dev` adds to the edge's CPU per streamed token: the same Worker under
// wrangler dev as it starts by default, under wrangler dev without its local trace collector
// (X_LOCAL_OBSERVABILITY=false), and as `wrangler deploy` bundles it in workerd alone
// (scripts/lib/workerd-bundle.mjs), in front of one reference origin, rounds interleaved.
// The Worker's workerd alone in each (wrangler dev's proxy left out).
//   node scripts/llm/dev-overhead.mjs [--rounds 5] [--streams 10] [--tokens 200]
import { parseArgs } from "node:util";
import { startOrigin } from "../lib/origin.mjs";
import { workerdCpuSeconds } from "../lib/process-cpu.mjs";
import { percentile } from "../lib/stats.mjs";
import { startBundledWorker } from "../lib/workerd-bundle.mjs";
import { startWranglerDev } from "../lib/wrangler-dev.mjs";

const { values: options } = parseArgs({ options: { rounds: { type: "string", default: "5" }, streams: { type: "string", default: "10" }, tokens: { type: "string", default: "200" } } });
const [ROUNDS, STREAMS, TOKENS] = [options.rounds, options.streams, options.tokens].map(Number);
const origin = await startOrigin({ ORIGIN_PREFIX_CACHE_MIB: "0" });
const body = JSON.stringify({ model: "tiny-llm", prompt: "The jury said it did find that", max_tokens: TOKENS, temperature: 0, stream: true, stream_options: { include_usage: true }, ignore_eos: true });

/** One stream through the edge; its completion tokens, from the usage chunk. */
async function stream(url) {
  const response = await fetch(`${url}/v1/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.status} ${text}`);
  const usage = text.split("\n\n").find((frame) => frame.startsWith("data: {") && frame.includes('"usage":{'));
  if (usage === undefined) throw new Error("no usage chunk");
  return JSON.parse(usage.slice(6)).usage.completion_tokens;
}

const vars = { ALLOW_ANONYMOUS: "true", ORIGIN_URL: origin.url };
const cells = [];
try {
  cells.push({ name: "wrangler dev", server: await startWranglerDev({ persistTo: ".wrangler/dev-overhead-1", vars }), dev: true });
  process.env.X_LOCAL_OBSERVABILITY = "false";
  cells.push({ name: "wrangler dev, no trace collector", server: await startWranglerDev({ persistTo: ".wrangler/dev-overhead-2", vars }), dev: true });
  delete process.env.X_LOCAL_OBSERVABILITY;
  cells.push({ name: "deploy bundle in workerd alone", server: await startBundledWorker({ persistTo: ".wrangler/dev-overhead-3", vars }), dev: false });
  const measure = async ({ server, dev }) => {
    const read = () => workerdCpuSeconds(server.pid, { exceptPort: dev ? Number(new URL(server.url).port) : undefined, precise: true });
    const before = read();
    const tokens = (await Promise.all(Array.from({ length: STREAMS }, () => stream(server.url)))).reduce((sum, n) => sum + n, 0);
    return ((read() - before) * 1000) / tokens;
  };
  // Two rounds each first, not counted: V8 optimizing the per-token path.
  for (const cell of cells) for (let i = 0; i < 2; i++) await measure(cell);
  for (const cell of cells) cell.rounds = [];
  for (let round = 0; round < ROUNDS; round++) for (const cell of cells) cell.rounds.push(await measure(cell));
  console.log(`the edge's workerd CPU per streamed token (ms; ${STREAMS} streams × ${TOKENS} tokens, ${ROUNDS} rounds interleaved)`);
  for (const cell of cells) console.log(`  ${cell.name.padEnd(34)} median ${percentile(cell.rounds, 50).toFixed(3)}   rounds ${cell.rounds.map((ms) => ms.toFixed(3)).join(", ")}`);
} finally {
  for (const cell of cells) await cell.server.stop();
  await origin.stop();
}
