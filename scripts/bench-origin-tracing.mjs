#!/usr/bin/env node
// What OpenTelemetry tracing costs the reference origin, side by side in one run: two origins
// (tracing off; tracing on, exporting OTLP/HTTP to a sink on loopback that reads and drops each
// batch) answer the same streamed completions, in interleaved rounds (each round both, in a new
// order). Reported per origin, medians over rounds: the origin's CPU per request (its
// process_cpu_seconds_total: steadier than wall time on a shared machine), requests/s, and the
// ratio on/off. Usage: node scripts/bench-origin-tracing.mjs [--rounds 5] [--requests 64]
// [--concurrency 4] [--prompt 16] [--tokens 16]
import { createServer } from "node:http";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { streamCompletion } from "./lib/completion-stream.mjs";
import { startOrigin } from "./lib/origin.mjs";
import { percentile, shuffle } from "./lib/stats.mjs";

const { values: options } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    requests: { type: "string", default: "64" },
    concurrency: { type: "string", default: "4" },
    prompt: { type: "string", default: "16" },
    tokens: { type: "string", default: "16" },
  },
});
const ROUNDS = Number(options.rounds);
const REQUESTS = Number(options.requests);
const CONCURRENCY = Number(options.concurrency);
const ids = Array.from({ length: Number(options.prompt) }, (_, i) => 100 + i);
const TOKENS = Number(options.tokens);

let exports = 0;
const sink = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    exports += 1;
    response.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
await new Promise((resolve) => sink.listen(0, "127.0.0.1", resolve));
const sinkUrl = `http://127.0.0.1:${sink.address().port}`;

const origins = {
  off: await startOrigin({}),
  // Batches every 200 ms (not the default 5 s): the exports fall inside the measured rounds.
  on: await startOrigin({ OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_BSP_SCHEDULE_DELAY: "200" }),
};

async function processCpu(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("process_cpu_seconds_total "));
  return Number(line?.split(" ").at(-1));
}

/** REQUESTS completions, CONCURRENCY at a time: the origin's CPU seconds and the wall time. */
async function run(url) {
  const cpu = await processCpu(url);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        next += 1;
        await streamCompletion(url, "tiny-llm", ids, TOKENS);
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  return { cpu: (await processCpu(url)) - cpu, wall };
}

// Warm-up: sessions, JIT, keep-alive sockets.
for (const origin of Object.values(origins)) await run(origin.url);
const results = { off: [], on: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const name of shuffle(["off", "on"], round))
    results[name].push(await run(origins[name].url));
}
const median = (values) => percentile(values, 50);
const cell = (name) => ({
  cpuMsPerRequest: (median(results[name].map((r) => r.cpu)) * 1000) / REQUESTS,
  requestsPerSecond: median(results[name].map((r) => REQUESTS / r.wall)),
});
const off = cell("off");
const on = cell("on");
console.log(
  `${ROUNDS} rounds × ${REQUESTS} streamed completions (${ids.length}-token prompt, ` +
    `${TOKENS} new tokens), ${CONCURRENCY} at a time; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
);
console.log("tracing  origin CPU ms/request  requests/s");
for (const [name, value] of [
  ["off", off],
  ["on", on],
])
  console.log(
    `${name.padEnd(8)} ${value.cpuMsPerRequest.toFixed(2).padStart(20)}` +
      `  ${value.requestsPerSecond.toFixed(1).padStart(10)}`,
  );
console.log(
  `on/off: CPU ${(on.cpuMsPerRequest / off.cpuMsPerRequest).toFixed(3)}×, ` +
    `requests/s ${(on.requestsPerSecond / off.requestsPerSecond).toFixed(3)}× ` +
    `(${exports} OTLP exports received by the sink)`,
);
await Promise.all(Object.values(origins).map((origin) => origin.stop()));
sink.close();
