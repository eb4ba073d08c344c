// SIGKILL soak of the payment webhooks: `wrangler dev` with persisted local state on loopback,
// signed Stripe events from several concurrent senders (Issuing authorization requests,
// charge.succeeded + charge.captured pairs for one ch_, redeliveries of acknowledged events),
// `kill -9` of wrangler and workerd a few times under that load, restart on the same state,
// then the checks: zero orphans (a history entry without its decision), zero losses (an
// acknowledged event whose payment has no decision, or whose delivery is not recorded), and a
// complete D1 copy (every decision of every card's Durable Object is in D1). Usage: npm run
// soak:webhooks [-- --kills 3 --round-seconds 10 --concurrency 8 --cards 12 --max-seconds 300]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Stripe from "stripe";
import { startWranglerDev } from "./lib/wrangler-dev.mjs";

const { values } = parseArgs({
  options: {
    kills: { type: "string", default: "3" },
    "round-seconds": { type: "string", default: "10" },
    concurrency: { type: "string", default: "8" },
    cards: { type: "string", default: "12" },
    "max-seconds": { type: "string", default: "300" },
    seed: { type: "string", default: "1" },
  },
});
const KILLS = Number(values.kills);
const ROUND_MS = Number(values["round-seconds"]) * 1000;
const CONCURRENCY = Number(values.concurrency);
const CARDS = Number(values.cards);
const DEADLINE = Date.now() + Number(values["max-seconds"]) * 1000;
const SECRET = "whsec_soak";
const API_KEY = "soak";

// Seeded choices (mulberry32), so a failing run can be repeated.
let seed = Number(values.seed) >>> 0;
const random = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

mkdirSync(".wrangler", { recursive: true });
const state = mkdtempSync(join(".wrangler", "soak-"));
const env = {
  ...process.env,
  PATH: `${join(process.cwd(), "node_modules", ".bin")}:${process.env.PATH}`,
};
execFileSync(
  "npx",
  ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", state],
  { stdio: "ignore", env },
);
const vars = { STRIPE_WEBHOOK_SECRET: SECRET, API_KEYS: API_KEY, ADYEN_HMAC_KEY: "00".repeat(32) };
process.env.PATH = env.PATH;

const run = Date.now().toString(36);
const T0 = Date.UTC(2019, 10, 1) / 1000;
let counter = 0;
/** eventId → { card, key, scored } for every event answered 2xx. */
const acknowledged = new Map();
const sent = [];
const stats = { sent: 0, acknowledged: 0, failed: 0, policy: 0, duplicates: 0 };

function nextEvents() {
  const i = counter++;
  const card = i % CARDS;
  const created = T0 + i * 60;
  if (random() < 0.5) {
    const cardId = `soak_${run}_ic_${card}`;
    const id = `iauth_${run}_${i}`;
    return [
      {
        event: {
          id: `evt_${run}_${i}`,
          object: "event",
          type: "issuing_authorization.request",
          api_version: Stripe.API_VERSION,
          created,
          data: {
            object: {
              id,
              created,
              amount: 0,
              currency: "usd",
              authorization_method: "chip",
              card: { id: cardId },
              pending_request: { amount: 500 + ((i * 7919) % 90_000), currency: "usd" },
              merchant_data: {
                category_code: "5411",
                city: "Richmond",
                state: "VA",
                postal_code: "23229",
                country: "US",
                name: "GROCER",
                network_id: String(1000 + (i % 40)),
              },
            },
          },
        },
        card: cardId,
        key: `stripe:${id}`,
      },
    ];
  }
  const fingerprint = `soak_${run}_fp_${card}`;
  const charge = {
    id: `ch_${run}_${i}`,
    object: "charge",
    created,
    amount: 1_000 + i,
    currency: "usd",
    status: "succeeded",
    payment_method_details: { type: "card", card: { fingerprint } },
  };
  return ["charge.succeeded", "charge.captured"].map((type, k) => ({
    event: {
      id: `evt_${run}_${i}_${k}`,
      object: "event",
      type,
      api_version: Stripe.API_VERSION,
      created,
      data: { object: charge },
    },
    card: `fingerprint:${fingerprint}`,
    key: `stripe:${charge.id}`,
  }));
}

async function deliver(url, item) {
  const payload = JSON.stringify(item.event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
  stats.sent++;
  try {
    const response = await fetch(`${url}/v1/webhooks/stripe`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": signature },
      body: payload,
      signal: AbortSignal.timeout(10_000),
    });
    const body = await response.json();
    if (response.status !== 200) throw new Error(`${response.status} ${body.code}`);
    stats.acknowledged++;
    const scored = body.scored === true || body.metadata?.fraud_score !== undefined;
    if (!scored) stats.policy++;
    if (body.duplicate) stats.duplicates++;
    if (!acknowledged.has(item.event.id))
      acknowledged.set(item.event.id, { card: item.card, key: item.key, scored });
    sent.push(item);
  } catch {
    // killed mid-flight (or refused while down): not acknowledged, the provider would retry
    stats.failed++;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function load(url, until) {
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < until) {
        // One in five deliveries repeats an acknowledged event, as providers do.
        const items =
          sent.length > 0 && random() < 0.2
            ? [sent[Math.floor(random() * sent.length)]]
            : nextEvents();
        for (const item of items) await deliver(url, item);
      }
    }),
  );
}

async function waitReady(url) {
  for (let i = 0; i < 120; i++) {
    const response = await fetch(`${url}/v2/health/ready`).catch(() => undefined);
    if (response?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error("the Worker did not become ready");
}

const started = Date.now();
let worker = await startWranglerDev({ persistTo: state, vars });
await waitReady(worker.url);
for (let kill = 1; kill <= KILLS && Date.now() < DEADLINE; kill++) {
  const killAt = Date.now() + ROUND_MS * (0.5 + random());
  const loading = load(worker.url, killAt + 500);
  await new Promise((resolve) => setTimeout(resolve, killAt - Date.now()));
  const failedBefore = stats.failed;
  await worker.kill("SIGKILL");
  await loading;
  console.log(
    `kill -9 #${kill} after ${((Date.now() - started) / 1000).toFixed(0)} ` +
      `s: ${stats.acknowledged} acknowledged so far, ` +
      `${stats.failed - failedBefore} deliveries cut off by this kill`,
  );
  worker = await startWranglerDev({ persistTo: state, vars });
  await waitReady(worker.url);
}
await load(worker.url, Math.min(Date.now() + ROUND_MS / 2, DEADLINE));

// The checks, on the restarted Worker: each card's Durable Object is the source of truth.
const cards = new Set([...acknowledged.values()].map((entry) => entry.card));
for (let i = 0; i < CARDS; i++)
  cards.add(`soak_${run}_ic_${i}`).add(`fingerprint:soak_${run}_fp_${i}`);
let orphans = 0;
let losses = 0;
let unrecorded = 0;
let historyEntries = 0;
const decisionKeys = new Set();
for (const card of cards) {
  const response = await fetch(`${worker.url}/v1/fraud/cards/${encodeURIComponent(card)}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  const view =
    response.status === 404 ? { history: [], decisions: [], events: [] } : await response.json();
  const decided = new Set(view.decisions.map((decision) => decision.transactionId));
  for (const decision of view.decisions) decisionKeys.add(decision.transactionKey);
  historyEntries += view.history.length;
  orphans += view.history.filter((entry) => !decided.has(entry.id)).length;
  const events = new Set(view.events.map((event) => event.eventId));
  for (const [eventId, entry] of acknowledged) {
    if (entry.card !== card || !entry.scored) continue;
    if (!view.decisions.some((decision) => decision.transactionKey === entry.key)) losses++;
    if (!events.has(eventId)) unrecorded++;
  }
}
worker.stop();
await new Promise((resolve) => setTimeout(resolve, 1_000));
const d1 = JSON.parse(
  execFileSync(
    "npx",
    [
      "wrangler",
      "d1",
      "execute",
      "DB",
      "--local",
      "--persist-to",
      state,
      "--json",
      "--command",
      "SELECT transaction_key FROM decisions",
    ],
    { encoding: "utf8", env },
  ),
);
const copied = new Set(d1[0].results.map((row) => row.transaction_key));
const missingInD1 = [...decisionKeys].filter((key) => !copied.has(key)).length;
rmSync(state, { recursive: true, force: true });

console.log(
  `\n${KILLS} × kill -9 under load (${CONCURRENCY} senders, ${CARDS * 2} cards, ` +
    `seed ${values.seed}) in ${((Date.now() - started) / 1000).toFixed(0)} s`,
);
console.log(
  `deliveries: ${stats.sent} sent, ${stats.acknowledged} acknowledged (${stats.duplicates} ` +
    `duplicates, ${stats.policy} answered without a score), ${stats.failed} not acknowledged`,
);
console.log(
  `stored: ${decisionKeys.size} decisions, ${historyEntries} history ` +
    `entries; D1 copy: ${decisionKeys.size - missingInD1}/${decisionKeys.size}`,
);
console.log(`orphans (history without decision): ${orphans}`);
console.log(
  `losses (acknowledged, scored, no decision): ${losses}; ` +
    `acknowledged deliveries not recorded: ${unrecorded}`,
);
console.log(`D1 decisions missing from the copy: ${missingInD1}`);
const ok =
  orphans === 0 && losses === 0 && unrecorded === 0 && missingInD1 === 0 && stats.acknowledged > 0;
console.log(ok ? "PASS" : "FAIL");
process.exitCode = ok ? 0 : 1;
