#!/usr/bin/env node
// The full collections under load, the service against the platform's floor, side by side in one
// run: the deploy bundle (scripts/lib/workerd-bundle.mjs) deciding signed Stripe
// issuing_authorization.request events, and a Worker with a decision's shape and none of its work
// (scripts/fraud/floor-worker: the body read, parsed, one call to the card's Durable Object by
// name, one row inserted, a JSON answer), each in workerd alone with V8's --trace-gc-nvp, on its
// own socket, in alternating blocks of the same requests at C in flight. For each: p50/p99/p99.9,
// the full collections (each one pause of every request in flight), how much of each pause is
// V8's own phases and how much workerd sweeping its C++ objects, the pause a request leaves
// (a pause over the requests answered since the previous full one), and the p99 of every window
// of W consecutive answers: the worst, and how many read over 50 ms (docs/fraud.md "What the
// tail is made of").
// Usage: node scripts/fraud/gc-floor.mjs [--events 16000 --concurrency 16 --blocks 4
//   --window 800 --state-dir /dev/shm/gc-floor]
import { execFileSync } from "node:child_process";
import http from "node:http";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { gcSummary, records } from "../lib/gc-trace.mjs";
import { percentile } from "../lib/stats.mjs";
import { startBundledWorker } from "../lib/workerd-bundle.mjs";
import { post, SECRET, signedRequests } from "./webhook-load.mjs";

const { values: options } = parseArgs({
  options: {
    events: { type: "string", default: "16000" },
    concurrency: { type: "string", default: "16" },
    blocks: { type: "string", default: "4" },
    window: { type: "string", default: "800" },
    "state-dir": { type: "string", default: "/dev/shm/gc-floor" },
  },
});
const EVENTS = Number(options.events);
const CONCURRENCY = Number(options.concurrency);
const BLOCKS = Number(options.blocks);
const WINDOW = Number(options.window);
const GOAL_MS = 50;
const WARM_UP = 300;

const WORKERS = [
  { name: "platform floor", config: "scripts/fraud/floor-worker/wrangler.jsonc", d1: false },
  { name: "the service", config: "wrangler.jsonc", d1: true },
];

async function start({ config, d1 }, k) {
  const state = resolve(options["state-dir"], `state-${k}`);
  rmSync(state, { recursive: true, force: true });
  if (d1)
    execFileSync(
      "npx",
      ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", state],
      { stdio: "ignore" },
    );
  const server = await startBundledWorker({
    config,
    persistTo: state,
    vars: { STRIPE_WEBHOOK_SECRET: SECRET },
    traceGc: true,
    direct: true,
  });
  return { server, state, answers: [], linesAtStart: 0 };
}

/** `requests` at CONCURRENCY in flight; each answer's latency and how many GC lines preceded it. */
async function block(run, requests) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < requests.length) {
        const ms = await post(run.server.url, requests[next++], agent);
        run.answers.push({ ms, lines: run.server.gcLines().length });
      }
    }),
  );
  agent.destroy();
}

/** The Worker isolate's full collections while the answers came, with the answers before each. */
function fullCollections(run) {
  const lines = run.server.gcLines();
  const { isolate } = gcSummary(lines);
  const full = records(lines).filter(
    (record) => record.index >= run.linesAtStart && record.isolate === isolate && record.full,
  );
  return full.map((record, k) => ({
    ...record,
    // Answers in since the previous full collection (the first: since the measuring began).
    answered: run.answers.filter(
      ({ lines: seen }) => seen <= record.index && (k === 0 || seen > full[k - 1].index),
    ).length,
  }));
}

function report(name, run) {
  const latencies = run.answers.map(({ ms }) => ms);
  const full = fullCollections(run);
  const windows = [];
  for (let at = 0; at + WINDOW <= run.answers.length; at += WINDOW / 4) {
    const slice = run.answers.slice(at, at + WINDOW);
    const holds = full.some(
      ({ index }) => slice[0].lines <= index && index < slice[slice.length - 1].lines,
    );
    windows.push({
      p99: percentile(
        slice.map(({ ms }) => ms),
        99,
      ),
      holds,
    });
  }
  const worst = Math.max(...windows.map(({ p99 }) => p99));
  const over = windows.filter(({ p99 }) => p99 > GOAL_MS);
  const holding = windows.filter(({ holds }) => holds);
  // The first full collection's span began before the measuring: its pause per answer is unknown.
  const perAnswer = full.slice(1).map(({ ms, v8Ms, answered }) => ({
    all: (ms / answered) * 1000,
    swept: ((ms - v8Ms) / answered) * 1000,
  }));
  const range = (values, digits = 1) =>
    values.length === 0
      ? "-"
      : `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
  return {
    name,
    answers: latencies.length,
    p50: percentile(latencies, 50).toFixed(1),
    p99: percentile(latencies, 99).toFixed(1),
    p999: percentile(latencies, 99.9).toFixed(1),
    full: full.length,
    pauses: full.map(({ ms }) => ms.toFixed(0)).join(", ") || "-",
    v8: full.map(({ v8Ms }) => v8Ms.toFixed(0)).join(", ") || "-",
    between:
      full
        .slice(1)
        .map(({ answered }) => answered)
        .join(", ") || "-",
    perAnswer: range(perAnswer.map(({ all }) => all)),
    swept: range(perAnswer.map(({ swept }) => swept)),
    meanSwept:
      perAnswer.length === 0
        ? undefined
        : perAnswer.reduce((sum, { swept }) => sum + swept, 0) / perAnswer.length,
    worst: worst.toFixed(1),
    over: `${over.length} of ${windows.length}`,
    holding: `${holding.filter(({ p99 }) => p99 > GOAL_MS).length} of ${holding.length}`,
  };
}

const runs = [];
try {
  for (const [k, worker] of WORKERS.entries()) runs.push(await start(worker, k));
  for (const run of runs) {
    for (const request of signedRequests("decision", 200_000, WARM_UP))
      await post(run.server.url, request);
    run.linesAtStart = run.server.gcLines().length;
    // Payments after every measured one (2023), as bench:fraud warms up.
  }
  const perBlock = Math.ceil(EVENTS / BLOCKS);
  for (let b = 0; b < BLOCKS; b++) {
    const requests = signedRequests("decision", b * perBlock, perBlock);
    const order = b % 2 === 0 ? runs : [...runs].reverse();
    for (const run of order) await block(run, requests);
  }
  const rows = runs.map((run, k) => report(WORKERS[k].name, run));
  console.log(
    `\nSigned Stripe issuing_authorization.request events at ${CONCURRENCY} in flight, ` +
      `${BLOCKS} alternating blocks of ${perBlock} each, both in workerd alone with ` +
      `--trace-gc-nvp; windows of ${WINDOW} consecutive answers every ${WINDOW / 4}:`,
  );
  const head = [
    "Worker",
    "answers",
    "p50 ms",
    "p99 ms",
    "p99.9 ms",
    "full collections",
    "their pauses, ms",
    "V8's own phases in them, ms",
    "answers between them",
    "pause per 1,000 answers, ms",
    "workerd's sweep per 1,000 answers, ms",
    `worst ${WINDOW}-answer p99, ms`,
    `windows over ${GOAL_MS} ms`,
    "of those holding a full collection",
  ];
  console.log(`| ${head.join(" | ")} |\n|${head.map(() => "---").join("|")}|`);
  for (const row of rows)
    console.log(
      `| ${[
        row.name,
        row.answers,
        row.p50,
        row.p99,
        row.p999,
        row.full,
        row.pauses,
        row.v8,
        row.between,
        row.perAnswer,
        row.swept,
        row.worst,
        row.over,
        row.holding,
      ].join(" | ")} |`,
    );
  const [floor, service] = rows;
  if (floor.meanSwept !== undefined && service.meanSwept !== undefined)
    console.log(
      `\nworkerd's sweep per answer, the service ÷ the platform floor: ` +
        `${(service.meanSwept / floor.meanSwept).toFixed(2)}×`,
    );
} finally {
  for (const run of runs) {
    await run.server.stop();
    rmSync(run.state, { recursive: true, force: true });
  }
}
