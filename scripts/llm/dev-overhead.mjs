#!/usr/bin/env node
// What `wrangler dev` adds to the edge's CPU per streamed token: the same Worker under
// wrangler dev as it starts by default, under wrangler dev without its local trace collector
// (X_LOCAL_OBSERVABILITY=false), and as `wrangler deploy` bundles it in workerd alone
// (scripts/lib/workerd-bundle.mjs), in front of one reference origin, rounds interleaved
// (scripts/lib/stream-cpu.mjs). The Worker's workerd alone in each (wrangler dev's proxy left out).
//   node scripts/llm/dev-overhead.mjs [--rounds 5] [--streams 10] [--tokens 200]
import { parseArgs } from "node:util";
import { startOrigin } from "../lib/origin.mjs";
import { percentile } from "../lib/stats.mjs";
import { cpuPerToken, tokensOf } from "../lib/stream-cpu.mjs";
import { startBundledWorker } from "../lib/workerd-bundle.mjs";
import { startWranglerDev } from "../lib/wrangler-dev.mjs";

const { values: options } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    streams: { type: "string", default: "10" },
    tokens: { type: "string", default: "200" },
  },
});
const [ROUNDS, STREAMS, TOKENS] = [options.rounds, options.streams, options.tokens].map(Number);
const origin = await startOrigin({ ORIGIN_PREFIX_CACHE_MIB: "0" });
const body = {
  model: "tiny-llm",
  prompt: "The jury said it did find that",
  max_tokens: TOKENS,
  temperature: 0,
  stream: true,
  ignore_eos: true,
};

const vars = { ORIGIN_URL: origin.url };
const servers = [];
try {
  servers.push([
    "wrangler dev",
    await startWranglerDev({ persistTo: ".wrangler/dev-overhead-1", vars }),
  ]);
  servers.push([
    "wrangler dev, no trace collector",
    await startWranglerDev({ persistTo: ".wrangler/dev-overhead-2", vars, traceCollector: false }),
  ]);
  servers.push([
    "deploy bundle in workerd alone",
    await startBundledWorker({ persistTo: ".wrangler/dev-overhead-3", vars }),
  ]);
  const cells = servers.map(([name, server]) => ({
    name,
    server,
    url: `${server.url}/v1/completions`,
    body,
  }));
  // A round of each first, not counted: V8 optimizing the per-token path.
  for (const cell of cells)
    await Promise.all(
      Array.from({ length: STREAMS }, () => tokensOf(cell.url, cell.body, cell.server.headers)),
    );
  const measured = await cpuPerToken(cells, { rounds: ROUNDS, streams: STREAMS });
  console.log(
    `the edge's workerd CPU per streamed token (ms; ${STREAMS} ` +
      `streams × ${TOKENS} tokens, ${ROUNDS} rounds interleaved)`,
  );
  for (const cell of measured)
    console.log(
      `  ${cell.name.padEnd(34)} median ` +
        `${percentile(cell.workerRounds.map(Number), 50).toFixed(3)}   ` +
        `rounds ${cell.workerRounds.join(", ")}`,
    );
} finally {
  for (const [, server] of servers) await server.stop();
  await origin.stop();
}
