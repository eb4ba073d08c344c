// Signed Stripe webhooks at C in flight against one Worker, for bench:fraud: every request is
// signed before the clock starts (the load generator shares the machine's cores with workerd),
// and the CPU of each process that served them is read from /proc, with the load generator's own.
import { readFileSync } from "node:fs";
import http from "node:http";
import Stripe from "stripe";
import { treeCpuSeconds, workerdCpuSeconds } from "../lib/process-cpu.mjs";
import { issuingAuthorizationEvent, stripeSigned } from "../lib/stripe-issuing.mjs";

export const SECRET = "whsec_bench";
const run = Date.now().toString(36);

/** A signed event the webhook verifies, parses and acknowledges without deciding anything. */
function acknowledgedOnly(i) {
  return {
    id: `evt_${run}_ack_${i}`,
    object: "event",
    type: "customer.created",
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: `cus_${run}_${i}`, object: "customer" } },
  };
}

/**
 * `count` signed requests from payment `offset` on: Issuing authorizations over 50 cards
 * (`decision`), or events only acknowledged (`floor`).
 * @param {"decision" | "floor"} kind
 */
export function signedRequests(kind, offset, count) {
  return Array.from({ length: count }, (_, k) => {
    const i = offset + k;
    const event = kind === "floor" ? acknowledgedOnly(i) : issuingAuthorizationEvent({ run, i });
    const payload = JSON.stringify(event);
    return { kind, payload, headers: stripeSigned(payload, SECRET) };
  });
}

// node:http on kept-alive sockets: ~0.15 ms of the load generator's CPU per request here, where
// fetch (undici) took 0.6–0.9 ms, on the cores workerd needs. Each load() has sockets of its own,
// closed at its end: a socket left idle through the other servers' turns may be closed by its
// server as the next request goes out on it ("socket hang up").
const keptAlive = () => new http.Agent({ keepAlive: true, maxSockets: 256 });
const warmUp = keptAlive();

/** The status and the text of a POST of `body` to `url`. */
function httpPost(url, headers, body, agent) {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: "POST", headers, agent }, (response) => {
      const chunks = [];
      response.on("data", (chunk) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode, text: Buffer.concat(chunks).toString() }),
      );
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body);
  });
}

/** Posts one signed request; its latency in ms, once the whole answer has arrived. */
export async function post(url, { kind, payload, headers }, agent = warmUp) {
  const started = performance.now();
  const { status, text } = await httpPost(`${url}/v1/webhooks/stripe`, headers, payload, agent);
  if (status !== 200) throw new Error(`webhook answered ${status}: ${text}`);
  if (kind === "decision" && JSON.parse(text).metadata?.fraud_score === undefined)
    throw new Error(`not scored: ${text}`);
  return performance.now() - started;
}

const isWorkerd = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "workerd";
  } catch {
    return false;
  }
};

/**
 * What a harness's processes have spent, in CPU ms, by name. `wrangler dev`: every workerd of
 * its tree, the proxy's alone (the workerd on the dev port, which a deployed Worker lacks) and
 * wrangler's Node processes; a deploy bundle: its one workerd.
 * @param {{ pid: number, url: string }} server @param {"wrangler dev" | "deploy bundle"} harness
 */
export function meters(server, harness) {
  const ms = (seconds) => seconds * 1000;
  if (harness === "deploy bundle")
    return { workerd: () => ms(workerdCpuSeconds(server.pid, { precise: true })) };
  const port = Number(new URL(server.url).port);
  return {
    workerd: () => ms(workerdCpuSeconds(server.pid, { precise: true })),
    worker: () => ms(workerdCpuSeconds(server.pid, { exceptPort: port, precise: true })),
    wrangler: () => ms(treeCpuSeconds(server.pid, (pid) => !isWorkerd(pid), { precise: true })),
  };
}

const read = (all) => Object.fromEntries(Object.entries(all).map(([name, f]) => [name, f()]));

/**
 * Sends `requests` at `concurrency` in flight; their latencies, the wall ms until the last answer,
 * and the CPU ms each meter and the load generator spent, read `settleMs` later (so work a
 * request leaves behind, the D1 copy in the card's alarm, counts too). `onAnswered` runs when the
 * last answer is in, before the settling.
 */
export async function load(url, requests, concurrency, cpu, settleMs = 0, onAnswered = () => {}) {
  const latencies = [];
  let next = 0;
  const agent = keptAlive();
  const before = read(cpu);
  const generator = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) latencies.push(await post(url, requests[next++], agent));
    }),
  );
  const ms = performance.now() - started;
  onAnswered();
  agent.destroy();
  if (settleMs > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
  const after = read(cpu);
  const used = process.cpuUsage(generator);
  const cpuMs = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
  return { latencies, ms, cpuMs: { ...cpuMs, generator: (used.user + used.system) / 1000 } };
}
