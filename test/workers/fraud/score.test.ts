// POST /v1/fraud/score inside workerd: the edge featurizer + INT8 GRU in WASM give the
// scores onnxruntime-node gave the training script's own windows.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import windows from "../../fixtures/fraud-gru/windows.json";
import { RawRowSchema, toTransactionInput } from "../../support/tabformer";
import { post, problem } from "../../support/workers/helpers";

const { histories } = z
  .object({
    histories: z.array(
      z.object({
        why: z.string(),
        transactions: z.array(RawRowSchema),
        int8Score: z.number(),
        int8WasmScore: z.number(),
      }),
    ),
  })
  .parse(windows);

const accounts = histories.map((history) => {
  const all = history.transactions.map((raw, i) => toTransactionInput(raw, `t${i}`));
  return { history: all.slice(0, -1), transaction: all.at(-1)! };
});

interface ScoreBody {
  model: string;
  results: { transaction_id: string; score: number; label: string; history_used: number }[];
}

describe("POST /v1/fraud/score", () => {
  it.each(accounts.map((account, i) => [i, histories[i]!.why, account] as const))(
    "account %i (%s): the score onnxruntime scored the trainer's window with",
    async (i, _, account) => {
      const response = await post("/v1/fraud/score", { accounts: [account] });
      expect(response.status).toBe(200);
      const body = await response.json<ScoreBody>();
      expect(body.model).toBe("fraud-gru");
      const [result] = body.results;
      // Static INT8: the WASM engine and native onnxruntime compute the same integers.
      expect(Math.abs(result!.score - histories[i]!.int8WasmScore)).toBeLessThanOrEqual(1e-6);
      expect(Math.abs(result!.score - histories[i]!.int8Score)).toBeLessThanOrEqual(1e-6);
      expect(result!.history_used).toBe(Math.min(6, histories[i]!.transactions.length - 1));
      expect(["LEGIT", "SUSPECT", "FRAUD"]).toContain(result!.label);
    },
  );

  it(
    "scores a batch in one run exactly as each account " +
      "alone: a decision never depends on its batch-mates",
    async () => {
      const batch = await (await post("/v1/fraud/score", { accounts })).json<ScoreBody>();
      expect(batch.results.map((result) => result.transaction_id)).toEqual(
        accounts.map((account) => account.transaction.id),
      );
      batch.results.forEach((result, i) =>
        expect(Math.abs(result.score - histories[i]!.int8WasmScore)).toBeLessThanOrEqual(1e-6),
      );
      const reversed = await (
        await post("/v1/fraud/score", { accounts: [...accounts].reverse() })
      ).json<ScoreBody>();
      expect(reversed.results.map((result) => result.score).reverse()).toEqual(
        batch.results.map((result) => result.score),
      );
    },
  );

  it("400 naming the field for a negative amount or a future date", async () => {
    const negative = structuredClone(accounts[0]!);
    negative.transaction.amount = -5;
    const response = await post("/v1/fraud/score", { accounts: [negative] });
    expect(response.status).toBe(400);
    expect((await problem(response)).field).toBe("accounts.0.transaction.amount");

    const future = structuredClone(accounts[0]!);
    future.history[0]!.timestamp = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const later = await post("/v1/fraud/score", { accounts: [future] });
    expect(later.status).toBe(400);
    expect((await problem(later)).field).toBe("accounts.0.history.0.timestamp");
  });

  it("400 for an unknown method or a malformed MCC", async () => {
    const bad = structuredClone(accounts[0]!);
    bad.transaction.merchant.mcc = "54";
    const response = await post("/v1/fraud/score", { accounts: [bad] });
    expect((await problem(response)).field).toBe("accounts.0.transaction.merchant.mcc");
  });

  it(
    "422 for history of another card, for a model that " +
      "does not score fraud, and for too many accounts",
    async () => {
      const mixed = structuredClone(accounts[0]!);
      mixed.history[0]!.card_id = "someone-else";
      const response = await post("/v1/fraud/score", { accounts: [mixed] });
      expect(response.status).toBe(422);
      expect((await problem(response)).field).toBe("accounts.0.history.0.card_id");

      expect((await post("/v1/fraud/score", { model: "spam-classifier", accounts })).status).toBe(
        422,
      );
      expect(
        (await post("/v1/fraud/score", { accounts: Array.from({ length: 65 }, () => accounts[0]) }))
          .status,
      ).toBe(422);
      expect((await post("/v1/fraud/score", { model: "nope", accounts })).status).toBe(404);
    },
  );
});
