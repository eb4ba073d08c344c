// The fraud model's reference distribution for drift monitoring: the training generator's world
// (scripts/fraud/generate.mjs at the seed scripts/fraud/build.sh trains on), each sampled row decided as the edge decides
// it (its window, score and rule inputs), summarised per monitored feature as decile bins (numeric)
// or category shares. Writes models/fraud-gru/drift-reference.json.
// Usage: npx tsx scripts/fraud/drift-reference.ts [--seed 20261122 --users 800 --sample 6000]
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-web";
import { FraudScoringSchema } from "../../src/models/manifest";
import { MONITORED } from "../../src/tasks/fraud/drift/drift";
import { ruleInputs } from "../../src/tasks/fraud/rules/rule-inputs";
import { labelFor } from "../../src/tasks/fraud/scoring";
import { type Transaction, TransactionSchema } from "../../src/tasks/fraud/transaction";
import { buildWindows } from "../../src/tasks/fraud/windows";

const { values: options } = parseArgs({
  options: {
    seed: { type: "string", default: "20261122" },
    users: { type: "string", default: "800" },
    sample: { type: "string", default: "6000" },
  },
});
const OUT = ".cache/fraud-drift/transactions";
const BATCH = 64;

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

function fields(line: string): string[] {
  const out: string[] = [];
  const pattern = /("([^"]*)"|[^,]*)(,|$)/g;
  for (let match = pattern.exec(line); match !== null; match = pattern.exec(line)) {
    out.push(match[2] ?? match[1] ?? "");
    if (match[3] === "") break;
  }
  return out;
}

const cards = new Map<string, Transaction[]>();
readFileSync(`${OUT}.csv`, "utf8")
  .trimEnd()
  .split("\n")
  .slice(1)
  .forEach((line, i) => {
    const [user, card, year, month, day, time, amount, chip, name, city, state, zip, mcc, errors] =
      fields(line);
    const [hours, minutes] = (time ?? "00:00").split(":").map(Number);
    const transaction = TransactionSchema.parse({
      id: `r${i}`,
      card_id: `${user}-${card}`,
      timestamp: new Date(
        Date.UTC(Number(year), Number(month) - 1, Number(day), hours, minutes),
      ).toISOString(),
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
    cards.set(transaction.card_id, [...(cards.get(transaction.card_id) ?? []), transaction]);
  });

const manifest = FraudScoringSchema.parse(
  JSON.parse(readFileSync("models/fraud-gru/manifest.json", "utf8")),
);
// Every k-th row of every card, so the sample spans the whole world evenly.
const all = [...cards.values()].flatMap((rows) =>
  rows.map((current, i) => ({ current, history: rows.slice(Math.max(0, i - 6), i) })),
);
const step = Math.max(1, Math.floor(all.length / Number(options.sample)));
const sample = all.filter((_, i) => i % step === 0);

ort.env.wasm.numThreads = 1;
const session = await ort.InferenceSession.create(
  readFileSync(`models/fraud-gru/${manifest.graphs.model.file}`),
);
const rows: { score: number; inputs: ReturnType<typeof ruleInputs> }[] = [];
for (let start = 0; start < sample.length; start += BATCH) {
  const batch = sample.slice(start, start + BATCH);
  const windows = buildWindows(batch, manifest.window, manifest.features);
  const result = await session.run({
    transactions: new ort.Tensor("float32", windows.data, windows.shape),
  });
  const scores = result.scores?.data as Float32Array;
  batch.forEach(({ current, history }, i) => {
    const score = scores[i] ?? 0;
    const label = labelFor(score, manifest.thresholds);
    rows.push({ score, inputs: ruleInputs(current, history, score, label, "stripe") });
  });
}

const reference: Record<string, unknown> = {};
for (const [name, read] of Object.entries(MONITORED)) {
  const values = rows.map(read);
  if (typeof values[0] === "string") {
    const categories = [...new Set(values.map(String))].sort();
    categories.push("(other)");
    const shares = categories.map(
      (category) => values.filter((value) => value === category).length / values.length,
    );
    reference[name] = { kind: "categorical", categories, shares };
    continue;
  }
  const sorted = values.map(Number).sort((a, b) => a - b);
  // Decile edges, merged where they tie (a discrete feature has fewer bins).
  const edges = [
    ...new Set(
      Array.from({ length: 9 }, (_, k) => sorted[Math.floor(((k + 1) * sorted.length) / 10)] ?? 0),
    ),
  ];
  const bins = [...edges, Number.POSITIVE_INFINITY];
  const shares = bins.map(
    (edge, b) =>
      sorted.filter((x) => x <= edge && (b === 0 || x > (bins[b - 1] ?? 0))).length / sorted.length,
  );
  reference[name] = { kind: "numeric", edges, shares };
}
const out = {
  model: manifest.name,
  modelVersion: manifest.version,
  source: `scripts/fraud/drift-reference.ts --seed ${options.seed} --users ${options.users} (${rows.length} decisions)`,
  features: reference,
};
writeFileSync("models/fraud-gru/drift-reference.json", `${JSON.stringify(out, null, 2)}\n`);
console.log(JSON.stringify(out.features, null, 1).slice(0, 1500));
