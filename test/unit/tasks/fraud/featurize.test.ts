// The edge featurizer against the training script's own feature vectors (fixtures saved by
// scripts/fraud/fixtures.py), column by column, so the edge and the trainer cannot drift.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FraudScoringSchema } from "../../../../src/models/manifest";
import { featurize, toTabFormer, type TabFormerRow } from "../../../../src/tasks/fraud/featurize";
import { TransactionSchema } from "../../../../src/tasks/fraud/transaction";
import { buildWindows } from "../../../../src/tasks/fraud/windows";
import {
  RawRowSchema,
  rawTimeMs,
  toTransactionInput,
  type RawRow,
} from "../../../support/tabformer";

const manifest = FraudScoringSchema.parse(
  JSON.parse(readFileSync("models/fraud-gru/manifest.json", "utf8")),
);

const features = z
  .object({
    featureCount: z.number(),
    columns: z.array(z.string()),
    items: z.array(
      z.object({ why: z.string(), transaction: RawRowSchema, features: z.array(z.number()) }),
    ),
  })
  .parse(JSON.parse(readFileSync("test/fixtures/fraud-gru/features.json", "utf8")));

const windows = z
  .object({
    histories: z.array(
      z.object({
        why: z.string(),
        transactions: z.array(RawRowSchema),
        paddedSteps: z.number().int(),
        window: z.array(z.array(z.number())),
      }),
    ),
  })
  .parse(JSON.parse(readFileSync("test/fixtures/fraud-gru/windows.json", "utf8")));

/** TabFormer's CSV fields as the training script reads them. */
function fromRaw(raw: RawRow): TabFormerRow {
  const zip = Number(raw.Zip ?? "");
  return {
    merchantState: raw["Merchant State"] ?? "",
    zip: raw.Zip && Number.isFinite(zip) ? Math.trunc(zip) : 0,
    merchantName: raw["Merchant Name"].trim(),
    merchantCity: raw["Merchant City"],
    mcc: String(raw.MCC),
    useChip: raw["Use Chip"],
    errors: raw["Errors?"] ?? "",
    timeMs: rawTimeMs(raw),
    amount: Number.parseFloat(raw.Amount.replace("$", "")),
  };
}

const toTransaction = (raw: RawRow, id: string) =>
  TransactionSchema.parse(toTransactionInput(raw, id));

describe("fraud featurizer vs scripts/fraud/features.py", () => {
  it("has the manifest's width", () => {
    expect(features.featureCount).toBe(manifest.features.count);
    expect(features.columns).toHaveLength(manifest.features.count);
  });

  it.each(features.items.map((item, i) => [i, item.why, item] as const))(
    "row %i (%s): every column equal",
    (_, __, item) => {
      const actual = featurize(fromRaw(item.transaction), manifest.features);
      const mismatched = features.columns.filter(
        (_, column) => Math.abs(actual[column]! - item.features[column]!) > 1e-6,
      );
      expect(mismatched).toEqual([]);
    },
  );

  it("maps API transactions onto the same features as the raw rows", () => {
    for (const item of features.items.filter((entry) =>
      ["Chip Transaction", "Swipe Transaction", "Online Transaction"].includes(
        entry.transaction["Use Chip"],
      ),
    )) {
      const transaction = toTransaction(item.transaction, "t");
      const actual = featurize(toTabFormer(transaction), manifest.features);
      expect(Array.from(actual)).toEqual(
        Array.from(featurize(fromRaw(item.transaction), manifest.features)),
      );
    }
  });

  it.each(windows.histories.map((history, i) => [i, history.why, history] as const))(
    "window %i (%s): time-major, left-padded",
    (_, __, history) => {
      const transactions = history.transactions.map((raw, i) => toTransaction(raw, `t${i}`));
      const current = transactions.at(-1)!;
      const built = buildWindows(
        [{ history: transactions.slice(0, -1), current }],
        manifest.window,
        manifest.features,
      );
      expect(built.shape).toEqual([7, 1, manifest.features.count]);
      expect(built.historyUsed).toEqual([transactions.length - 1]);
      history.window.forEach((row, step) => {
        const actual = built.data.subarray(
          step * manifest.features.count,
          (step + 1) * manifest.features.count,
        );
        row.forEach((value, column) =>
          expect(Math.abs(actual[column]! - value)).toBeLessThanOrEqual(1e-6),
        );
      });
    },
  );

  it("fills a used array exactly as a new one, and refuses one of another size", () => {
    const width = manifest.features.count;
    const accountOf = ({ transactions }: (typeof windows.histories)[number]) => {
      const parsed = transactions.map((raw, i) => toTransaction(raw, `t${i}`));
      return { history: parsed.slice(0, -1), current: parsed.at(-1)! };
    };
    // The longest history first, so the shorter ones' padding rows overwrite filled ones.
    const histories = windows.histories.toSorted(
      (a, b) => b.transactions.length - a.transactions.length,
    );
    const used = new Float32Array(manifest.window * width).fill(7);
    for (const history of histories) {
      const fresh = buildWindows([accountOf(history)], manifest.window, manifest.features);
      const refilled = buildWindows([accountOf(history)], manifest.window, manifest.features, used);
      expect(refilled.data).toBe(used);
      expect(Array.from(refilled.data)).toEqual(Array.from(fresh.data));
      expect(refilled.historyUsed).toEqual(fresh.historyUsed);
    }
    expect(() =>
      buildWindows(
        [accountOf(histories[0]!)],
        manifest.window,
        manifest.features,
        new Float32Array(width),
      ),
    ).toThrow(RangeError);
  });
});
