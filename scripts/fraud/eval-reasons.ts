// Evaluates the reason codes on the generator's labelled attacks (a world the model never saw:
// a fresh seed): every fraudulent row is explained as the edge explains a decision (the same
// featurizer, attribution and codes, the shipped INT8 model in onnxruntime-web), and the reason
// named first is compared with the attack's pattern (scripts/fraud/generate.mjs writes it).
// Usage: npx tsx scripts/fraud/eval-reasons.ts [--seed 4242 --users 800]
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-web";
import { FraudScoringSchema } from "../../src/models/manifest";
import { attribute, attributionBatch } from "../../src/tasks/fraud/attribution";
import { reasonsFor } from "../../src/tasks/fraud/reasons";
import { type Transaction, TransactionSchema } from "../../src/tasks/fraud/transaction";
import { buildWindows } from "../../src/tasks/fraud/windows";

const { values: options } = parseArgs({
  options: {
    seed: { type: "string", default: "4242" },
    users: { type: "string", default: "800" },
  },
});
const OUT = ".cache/fraud-reasons/transactions";

/** Per pattern: the code that names it, and the codes that describe part of it. */
const EXPECTED: Record<string, { signature: string[]; related: string[] }> = {
  "card-testing": {
    signature: ["burst_of_small_online_charges"],
    related: [
      "rapid_succession_of_charges",
      "small_test_sized_amount",
      "card_errors",
      "card_not_present",
    ],
  },
  "account-takeover": {
    signature: ["new_merchant_for_card", "amount_far_above_card_history"],
    related: [
      "new_merchant_category_for_card",
      "card_not_present",
      "card_errors",
      "large_amount",
      "amount",
    ],
  },
  "compromised-merchant": {
    signature: ["magnetic_stripe_swipe"],
    related: [
      "new_merchant_for_card",
      "merchant_or_location",
      "amount_far_above_card_history",
      "amount",
    ],
  },
  "impossible-travel": {
    signature: ["new_merchant_for_card", "merchant_or_location"],
    related: ["magnetic_stripe_swipe", "rapid_succession_of_charges", "amount"],
  },
  "amount-spike": {
    signature: ["amount_far_above_card_history"],
    related: ["new_merchant_for_card", "new_merchant_category_for_card", "large_amount"],
  },
};

execFileSync(
  "node",
  [
    "scripts/fraud/generate.mjs",
    "--seed",
    options.seed,
    "--users",
    options.users,
    "--out",
    `${OUT}.csv`,
  ],
  { stdio: "ignore" },
);

/** One CSV line's fields (quoted fields hold commas). */
function fields(line: string): string[] {
  const out: string[] = [];
  const pattern = /("([^"]*)"|[^,]*)(,|$)/g;
  for (let match = pattern.exec(line); match !== null; match = pattern.exec(line)) {
    out.push(match[2] ?? match[1] ?? "");
    if (match[3] === "") break;
  }
  return out;
}

const lines = readFileSync(`${OUT}.csv`, "utf8").trimEnd().split("\n").slice(1);
const patterns = readFileSync(`${OUT}.patterns.txt`, "utf8").split("\n");
const cards = new Map<string, { transaction: Transaction; pattern: string }[]>();
lines.forEach((line, i) => {
  const [user, card, year, month, day, time, amount, chip, name, city, state, zip, mcc, errors] =
    fields(line);
  const [hours, minutes] = (time ?? "00:00").split(":").map(Number);
  const timestamp = Date.UTC(Number(year), Number(month) - 1, Number(day), hours, minutes);
  const transaction = TransactionSchema.parse({
    id: `r${i}`,
    card_id: `${user}-${card}`,
    timestamp: new Date(timestamp).toISOString(),
    amount: Math.max(0, Number.parseFloat((amount ?? "0").replace("$", ""))),
    currency: "USD",
    method:
      chip === "Swipe Transaction" ? "swipe" : chip === "Online Transaction" ? "online" : "chip",
    merchant: {
      id: name,
      city,
      ...(state ? { state } : {}),
      ...(zip ? { zip } : {}),
      mcc: String(mcc).padStart(4, "0"),
    },
    errors: errors ? errors.split(",") : [],
  });
  const key = transaction.card_id;
  cards.set(key, [...(cards.get(key) ?? []), { transaction, pattern: patterns[i] ?? "" }]);
});

const manifest = FraudScoringSchema.parse(
  JSON.parse(readFileSync("models/fraud-gru/manifest.json", "utf8")),
);
ort.env.wasm.numThreads = 1;
const session = await ort.InferenceSession.create(
  readFileSync(`models/fraud-gru/${manifest.graphs.model.file}`),
);
const [input] = session.inputNames;
const [output] = session.outputNames;

const tally = new Map<
  string,
  { n: number; flagged: number; signature: number; related: number; first: Map<string, number> }
>();
const pending: { pattern: string; history: Transaction[]; current: Transaction }[] = [];
for (const rows of cards.values()) {
  rows.forEach(({ transaction, pattern }, i) => {
    if (pattern === "") return;
    const history = rows.slice(Math.max(0, i - (manifest.window - 1)), i).map((r) => r.transaction);
    pending.push({ pattern, history, current: transaction });
  });
}
{
  for (const { pattern, history, current } of pending) {
    const single = buildWindows([{ history, current }], manifest.window, manifest.features);
    const batch = attributionBatch(single.data, manifest.window, manifest.features);
    const result = await session.run({
      [input as string]: new ort.Tensor("float32", batch.data, batch.shape),
    });
    const scores = result[output as string]?.data as Float32Array;
    const attribution = attribute(scores);
    const reasons = reasonsFor(attribution, current, history);
    const entry = tally.get(pattern) ?? {
      n: 0,
      flagged: 0,
      signature: 0,
      related: 0,
      first: new Map<string, number>(),
    };
    entry.n++;
    if ((scores[0] ?? 0) >= manifest.thresholds.suspect) entry.flagged++;
    const first = reasons[0]?.code ?? "(none)";
    const expected = EXPECTED[pattern];
    if (expected?.signature.includes(first)) entry.signature++;
    if (expected?.signature.includes(first) || expected?.related.includes(first)) entry.related++;
    entry.first.set(first, (entry.first.get(first) ?? 0) + 1);
    tally.set(pattern, entry);
  }
  console.log(
    `\nReason named first on the generator's attacks (seed ${options.seed}, ${options.users} ` +
      "users, every fraudulent row, shipped INT8 model in onnxruntime-web):",
  );
  console.log(
    "| pattern | rows | flagged (≥ SUSPECT) | first = the pattern's signature code | " +
      "first = signature or related code | most frequent first reasons |\n|---|---|---|---|---|---|",
  );
  const pct = (k: number, n: number) => `${((100 * k) / n).toFixed(0)}%`;
  let all = { n: 0, signature: 0, related: 0 };
  for (const [pattern, entry] of [...tally].sort()) {
    const top = [...entry.first]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([code, k]) => `${code} ${pct(k, entry.n)}`)
      .join(", ");
    console.log(
      `| ${pattern} | ${entry.n} | ${pct(entry.flagged, entry.n)} | ` +
        `${pct(entry.signature, entry.n)} | ${pct(entry.related, entry.n)} | ${top} |`,
    );
    all = {
      n: all.n + entry.n,
      signature: all.signature + entry.signature,
      related: all.related + entry.related,
    };
  }
  console.log(`| all | ${all.n} | | ${pct(all.signature, all.n)} | ${pct(all.related, all.n)} | |`);
}
