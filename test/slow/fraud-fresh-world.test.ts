// The shipped fraud model's quality target, checked through the EDGE code path on a world it
// never saw: scripts/fraud/generate.mjs with another seed (new users, cards and merchants) →
// API transactions (zod schema) → the edge featurizer and windows → onnxruntime-web WASM,
// the Worker's engine. Python (`npm run eval:fraud:fresh`) measures AUPRC 0.9212 here; the
// edge must reproduce it, and stay above the 0.90 target.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-web";
import { afterAll, describe, expect, it } from "vitest";
import { FraudScoringSchema } from "../../src/models/manifest";
import { TransactionSchema, type Transaction } from "../../src/tasks/fraud/transaction";
import { buildWindows, type Account } from "../../src/tasks/fraud/windows";
import { averagePrecision } from "../../scripts/lib/metrics.mjs";
import { RawRowSchema, rawTimeMs, toTransactionInput } from "../support/tabformer";

const manifest = FraudScoringSchema.parse(
  JSON.parse(readFileSync("models/fraud-gru/manifest.json", "utf8")),
);
const SEED = "4242";
const USERS = "1500";
const BATCH = 4096;

const dir = mkdtempSync(join(tmpdir(), "fraud-fresh-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** RFC 4180 fields of one line (the generator quotes only multi-error fields). */
function splitCsvLine(line: string): string[] {
  const fields: string[] = [];
  let field = "";
  let quoted = false;
  for (const char of line) {
    if (char === '"') quoted = !quoted;
    else if (char === "," && !quoted) {
      fields.push(field);
      field = "";
    } else field += char;
  }
  fields.push(field);
  return fields;
}

interface Row {
  transaction: Transaction;
  card: string;
  fraud: boolean;
}

function generateWorld(): Row[] {
  const csv = join(dir, "transactions.csv");
  execFileSync(
    "node",
    ["scripts/fraud/generate.mjs", "--seed", SEED, "--users", USERS, "--out", csv],
    { stdio: "ignore" },
  );
  const [header, ...lines] = readFileSync(csv, "utf8").trimEnd().split("\n");
  const columns = splitCsvLine(header!);
  const numeric = new Set(["Year", "Month", "Day", "MCC"]);
  return lines.map((line, i) => {
    const fields = splitCsvLine(line);
    const record = Object.fromEntries(
      columns.map((name, c) => [name, numeric.has(name) ? Number(fields[c]) : fields[c]]),
    );
    const raw = RawRowSchema.parse(record);
    // Ids in file order: the edge breaks timestamp ties by id, the trainer by file order.
    const transaction = TransactionSchema.parse(
      toTransactionInput(raw, `t${String(i).padStart(8, "0")}`),
    );
    expect(transaction.timestamp).toBe(rawTimeMs(raw));
    return { transaction, card: transaction.card_id, fraud: record["Is Fraud?"] === "Yes" };
  });
}

/**
 * Every transaction with the (up to window − 1) earlier ones of its card, as the trainer windows
 * them.
 */
function accounts(rows: Row[]): Account[] {
  const byCard = new Map<string, Row[]>();
  for (const row of rows) {
    const cardRows = byCard.get(row.card);
    if (cardRows) cardRows.push(row);
    else byCard.set(row.card, [row]);
  }
  const result: Account[] = [];
  for (const cardRows of byCard.values()) {
    const ordered = cardRows.toSorted((a, b) => a.transaction.timestamp - b.transaction.timestamp);
    ordered.forEach((row, i) =>
      result.push({
        history: ordered.slice(Math.max(0, i - (manifest.window - 1)), i).map((r) => r.transaction),
        current: row.transaction,
      }),
    );
  }
  return result;
}

describe("fraud-gru on a never-seen world, through the edge featurizer and WASM", () => {
  it(`seed ${SEED}: AUPRC ≥ 0.90 and equal to the Python measurement`, async () => {
    const rows = generateWorld();
    const fraudById = new Map(rows.map((row) => [row.transaction.id, row.fraud]));
    const all = accounts(rows);
    ort.env.wasm.numThreads = 1;
    const session = await ort.InferenceSession.create(
      readFileSync(`models/fraud-gru/${manifest.graphs.model!.file}`),
      { executionProviders: ["wasm"] },
    );
    const scores = new Float32Array(all.length);
    for (let start = 0; start < all.length; start += BATCH) {
      const batch = all.slice(start, start + BATCH);
      const windows = buildWindows(batch, manifest.window, manifest.features);
      const output = await session.run({
        [manifest.graphs.model!.inputs[0]!.name]: new ort.Tensor(
          "float32",
          windows.data,
          windows.shape,
        ),
      });
      scores.set(output[manifest.graphs.model!.outputs[0]!.name]!.data as Float32Array, start);
    }
    const labels = all.map((account) => (fraudById.get(account.current.id) ? 1 : 0));
    expect(labels.filter(Boolean).length).toBeGreaterThan(1000);
    const auprc = averagePrecision(labels, scores);
    expect(auprc).toBeGreaterThanOrEqual(0.9);
    expect(Math.abs(auprc - 0.9212)).toBeLessThan(5e-4);
  }, 180_000);
});
