#!/usr/bin/env node
// Retraining on live outcomes, end to end against `wrangler dev` on loopback:
//   1. a synthetic world from scripts/fraud/generate.mjs; its last months, on some hundreds of
//      cards (a share of them with a fraud episode in the window), replayed in time order as
//      signed Stripe charge.succeeded / charge.failed events (the generator's times, amounts,
//      entry methods and errors; the merchant is the account itself, as for any charge);
//   2. outcomes for a share of the payments the generator marked fraud, in the order they are
//      reported (weeks later): charge.dispute.created with reason fraudulent or
//      radar.early_fraud_warning.created (some payments get both), disputes of other reasons
//      on a few legitimate payments, and a share of the events delivered twice;
//   3. GET /v1/fraud/export, checked: one row per payment, `Is Fraud?` = Yes exactly for the
//      payments a fraud outcome named;
//   4. `bash scripts/fraud/build.sh --csv <export> --out <dir>/retrained`: retrains on the export
//      and prints the shipped and retrained model's AUPRC and recall on its last rows.
// Usage: npm run retrain:fraud:e2e [-- --seed 3838 --users 1500 --cards 180 --fraud-cards 60
//   --from 2019-09-01 --reported 0.85 --duplicates 0.1 --concurrency 16 --out .cache/fraud-e2e]
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import Stripe from "stripe";
import { mulberry32 } from "../lib/seeded-input.mjs";
import { startWranglerDev } from "../lib/wrangler-dev.mjs";

const { values: options } = parseArgs({
  options: {
    seed: { type: "string", default: "3838" },
    users: { type: "string", default: "1500" },
    cards: { type: "string", default: "180" },
    "fraud-cards": { type: "string", default: "60" },
    from: { type: "string", default: "2019-09-01" },
    reported: { type: "string", default: "0.85" },
    duplicates: { type: "string", default: "0.1" },
    concurrency: { type: "string", default: "16" },
    out: { type: "string", default: ".cache/fraud-e2e" },
  },
});
const SEED = Number(options.seed);
const OUT = options.out;
const SECRET = "whsec_retrain_e2e";
const DAY = 86_400;
const random = mulberry32(SEED ^ 0x5eed);
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;

// --- 1. the world and the payments --------------------------------------------------------
mkdirSync(OUT, { recursive: true });
execFileSync(
  "node",
  [
    "scripts/fraud/generate.mjs",
    ...["--seed", options.seed, "--users", options.users, "--out", `${OUT}/world.csv`],
  ],
  { stdio: ["ignore", "ignore", "inherit"] },
);

/** One CSV line's fields (TabFormer quotes only Errors? holding several errors). */
const fields = (line) =>
  [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)]
    .slice(0, -1)
    .map(([, value]) => (value.startsWith('"') ? value.slice(1, -1).replaceAll('""', '"') : value));
const [header, ...lines] = readFileSync(`${OUT}/world.csv`, "utf8").trimEnd().split("\n");
const names = fields(header);
const from = Date.parse(`${options.from}T00:00:00Z`) / 1000;
const rows = lines
  .map((line) => Object.fromEntries(fields(line).map((value, i) => [names[i], value])))
  .map((row) => {
    const [hh, mm] = row.Time.split(":").map(Number);
    const at = Date.UTC(+row.Year, +row.Month - 1, +row.Day, hh, mm) / 1000;
    return { ...row, card: `${row.User}_${row.Card}`, at, fraud: row["Is Fraud?"] === "Yes" };
  })
  .filter((row) => row.at >= from);

const shuffled = (list) => {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
};
const cardsWithFraud = new Set(rows.filter((row) => row.fraud).map((row) => row.card));
const allCards = [...new Set(rows.map((row) => row.card))];
const fraudCards = shuffled([...cardsWithFraud]).slice(0, Number(options["fraud-cards"]));
const cleanCards = shuffled(allCards.filter((card) => !cardsWithFraud.has(card))).slice(
  0,
  Number(options.cards) - fraudCards.length,
);
const chosen = new Set([...fraudCards, ...cleanCards]);
const run = Date.now().toString(36);
const payments = rows
  .filter((row) => chosen.has(row.card))
  .sort((a, b) => a.at - b.at)
  .map((row, i) => ({ ...row, id: `ch_${run}_${i}` }));
if (payments.length > 10_000) throw new Error("more than the export's 10,000 rows: fewer --cards");

/** TabFormer's errors as Stripe writes them: card checks (online) and a decline code. */
const DECLINES = {
  "Bad CVV": "incorrect_cvc",
  "Bad Expiration": "expired_card",
  "Bad Card Number": "incorrect_number",
  "Bad PIN": "incorrect_pin",
  "Bad Zipcode": "incorrect_zip",
  "Insufficient Balance": "insufficient_funds",
  "Technical Glitch": "processing_error",
};

function chargeEvent(payment) {
  const errors = payment["Errors?"] ? payment["Errors?"].split(",") : [];
  const online = payment["Use Chip"] === "Online Transaction";
  const checked = online ? ["Bad CVV", "Bad Zipcode"] : [];
  const decline = errors.find((error) => !checked.includes(error) && DECLINES[error]);
  const fingerprint = `fp_${SEED}_${payment.card}`;
  const details = online
    ? {
        type: "card",
        card: {
          fingerprint,
          checks: {
            cvc_check: errors.includes("Bad CVV") ? "fail" : "pass",
            address_postal_code_check: errors.includes("Bad Zipcode") ? "fail" : "pass",
          },
        },
      }
    : {
        type: "card_present",
        card_present: {
          fingerprint,
          read_method:
            payment["Use Chip"] === "Swipe Transaction" ? "magnetic_stripe_track2" : "contact_emv",
        },
      };
  const charge = {
    id: payment.id,
    object: "charge",
    created: payment.at,
    amount: Math.round(Number(payment.Amount.replace("$", "")) * 100),
    currency: "usd",
    status: decline ? "failed" : "succeeded",
    failure_code: decline ? DECLINES[decline] : null,
    payment_method_details: details,
  };
  return event(decline ? "charge.failed" : "charge.succeeded", charge);
}

let eventCount = 0;
const event = (type, object) => ({
  id: `evt_${run}_${eventCount++}`,
  object: "event",
  type,
  api_version: Stripe.API_VERSION,
  created: Math.floor(Date.now() / 1000),
  data: { object },
});

// --- 2. the outcomes, in the order they are reported -----------------------------------------
const outcomes = [];
const fraudLabelled = new Set();
const dispute = (payment, reason, delayDays) => ({
  at: payment.at + Math.round(delayDays * DAY),
  body: event("charge.dispute.created", {
    id: `dp_${run}_${outcomes.length}`,
    object: "dispute",
    charge: payment.id,
    amount: Math.round(Number(payment.Amount.replace("$", "")) * 100),
    currency: "usd",
    created: payment.at + Math.round(delayDays * DAY),
    reason,
    status: "needs_response",
  }),
});
for (const payment of payments) {
  if (payment.fraud && random() < Number(options.reported)) {
    fraudLabelled.add(payment.id);
    if (random() < 0.6) outcomes.push(dispute(payment, "fraudulent", 10 + random() * 50));
    else {
      const delay = 1 + random() * 9;
      outcomes.push({
        at: payment.at + Math.round(delay * DAY),
        body: event("radar.early_fraud_warning.created", {
          id: `issfr_${run}_${outcomes.length}`,
          object: "radar.early_fraud_warning",
          charge: payment.id,
          created: payment.at + Math.round(delay * DAY),
          fraud_type: "made_with_stolen_card",
          actionable: true,
        }),
      });
      if (random() < 0.3) outcomes.push(dispute(payment, "fraudulent", 20 + random() * 40));
    }
  } else if (!payment.fraud && random() < 0.003)
    outcomes.push(dispute(payment, "product_not_received", 15 + random() * 45));
}
outcomes.sort((a, b) => a.at - b.at);
const deliveries = outcomes.map(({ body }) => body);
const redelivered = outcomes.filter(() => random() < Number(options.duplicates));
for (const { body } of redelivered) {
  const k = Math.floor(random() * (deliveries.length - deliveries.indexOf(body)));
  deliveries.splice(deliveries.indexOf(body) + 1 + k, 0, body); // later in the stream
}

// --- replay against wrangler dev ------------------------------------------------------------
async function deliver(worker, body) {
  const payload = JSON.stringify(body);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
  const response = await fetch(`${worker.url}/v1/webhooks/stripe`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": signature },
    body: payload,
  });
  const answer = await response.json();
  if (response.status !== 200) throw new Error(`${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function inFlight(worker, list, check) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Number(options.concurrency) }, async () => {
      while (next < list.length) {
        const body = list[next++];
        check(body, await deliver(worker, body));
      }
    }),
  );
}

const state = resolve(".wrangler/retrain-e2e-state");
rmSync(state, { recursive: true, force: true });
execFileSync(
  "npx",
  ["wrangler", "d1", "migrations", "apply", "DB", "--local"].concat(["--persist-to", state]),
  { stdio: "ignore" },
);
const worker = await startWranglerDev({
  persistTo: state,
  vars: { STRIPE_WEBHOOK_SECRET: SECRET },
});
let csv;
try {
  const fraudPayments = payments.filter((payment) => payment.fraud).length;
  console.log(
    `world: seed ${SEED}, ${options.users} users; replaying ${payments.length} payments ` +
      `since ${options.from} on ${chosen.size} cards (${fraudCards.length} with a fraud ` +
      `episode), ${fraudPayments} marked fraud by the generator (${elapsed()})`,
  );
  let unscored = 0;
  const replayStart = performance.now();
  await inFlight(worker, payments.map(chargeEvent), (_, answer) => {
    if (answer.scored !== true) unscored++;
  });
  const seconds = (performance.now() - replayStart) / 1000;
  console.log(
    `payments: ${payments.length} delivered in ${seconds.toFixed(0)} s ` +
      `(${(payments.length / seconds).toFixed(0)}/s), ${unscored} unscored (${elapsed()})`,
  );
  if (unscored > 0) throw new Error(`${unscored} payments not scored`);

  let duplicates = 0;
  await inFlight(worker, deliveries, (_, answer) => {
    if (answer.outcome === undefined) throw new Error(`no outcome: ${JSON.stringify(answer)}`);
    if (answer.duplicate) duplicates++;
  });
  const kinds = {};
  for (const { body } of outcomes) {
    const kind =
      body.type === "charge.dispute.created" ? `dispute (${body.data.object.reason})` : body.type;
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  console.log(
    `outcomes: ${outcomes.length} events (${Object.entries(kinds)
      .map(([kind, count]) => `${count} ${kind}`)
      .join(", ")}) + ${redelivered.length} redelivered, answered duplicate: ${duplicates}; ` +
      `${fraudLabelled.size} of ${fraudPayments} fraud payments reported (${elapsed()})`,
  );
  if (duplicates !== redelivered.length) throw new Error("duplicates not recognised as such");

  // --- 3. the export, once the card objects' outbox has reached D1 (about a second) ----------
  let counts = {};
  for (let attempt = 0; attempt < 60; attempt++) {
    const response = await fetch(`${worker.url}/v1/fraud/export`, { headers: worker.headers });
    if (response.status !== 200) throw new Error(`export answered ${response.status}`);
    if (response.headers.get("x-truncated") !== "false") throw new Error("export truncated");
    csv = await response.text();
    const labels = csv
      .trimEnd()
      .split("\n")
      .slice(1)
      .map((line) => line.slice(-3));
    counts = { rows: labels.length, yes: labels.filter((label) => label === "Yes").length };
    if (counts.rows === payments.length && counts.yes === fraudLabelled.size) break;
    await new Promise((done) => setTimeout(done, 2000));
  }
  console.log(
    `export: ${counts.rows} rows (payments sent ${payments.length}), Is Fraud? Yes ` +
      `${counts.yes} (payments named by a fraud outcome ${fraudLabelled.size}), No ` +
      `${counts.rows - counts.yes} (${elapsed()})`,
  );
  if (counts.rows !== payments.length || counts.yes !== fraudLabelled.size)
    throw new Error("the export's labels differ from the outcomes sent");
  // The shipped model's live figures over every decision of the run, from the same labels.
  const live = await (
    await fetch(`${worker.url}/v1/fraud/performance`, { headers: worker.headers })
  ).json();
  const rate = (x) => (typeof x === "number" ? x.toFixed(3) : String(x));
  console.log(
    `live (GET /v1/fraud/performance, shipped model, all ${live.decisions} decisions): ` +
      `FRAUD precision ${rate(live.precision.FRAUD)} recall ${rate(live.recall.FRAUD)}; ` +
      `SUSPECT or FRAUD precision ${rate(live.precision.SUSPECT)} ` +
      `recall ${rate(live.recall.SUSPECT)}`,
  );
} finally {
  await worker.kill("SIGTERM");
}
writeFileSync(`${OUT}/export.csv`, csv);

// --- 4. retrain on the export ---------------------------------------------------------------
console.log(
  `retraining: bash scripts/fraud/build.sh --csv ${OUT}/export.csv ` + `--out ${OUT}/retrained`,
);
execFileSync(
  "bash",
  ["scripts/fraud/build.sh", "--csv", `${OUT}/export.csv`, "--out", `${OUT}/retrained`],
  { stdio: "inherit" },
);
console.log(`done in ${elapsed()}`);
