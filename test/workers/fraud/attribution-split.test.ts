// The attribution batch cut at the scored step, inside workerd: the fraud model's attribution
// graph gives exactly the scores one run of the whole batch gives, row by row, so every score,
// contribution and reason is what it was; explained together, windows share runs and get the same answers.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import windows from "../../fixtures/fraud-gru/windows.json";
import type { FraudScoringManifest } from "../../../src/models/manifest";
import { bundledModels } from "../../../src/models/bundled";
import { createRegistry } from "../../../src/models/registry";
import { edgeRuntimes, type TensorCapability } from "../../../src/runtime";
import type { RegisteredModel } from "../../../src/tasks/registered-model";
import { createFraudScorer, MAX_EXPLAIN_BATCH } from "../../../src/tasks/fraud/scoring";
import { TransactionSchema } from "../../../src/tasks/fraud/transaction";
import { RawRowSchema, toTransactionInput } from "../../support/tabformer";

const { histories } = z
  .object({ histories: z.array(z.object({ transactions: z.array(RawRowSchema) })) })
  .parse(windows);
const parsed = histories.map((history) =>
  history.transactions.map((raw, i) => TransactionSchema.parse(toTransactionInput(raw, `t${i}`))),
);
const accounts = [
  ...parsed.map((all) => ({ history: all.slice(0, -1), current: all.at(-1)! })),
  // No history at all, and one earlier payment: the prefix is zeros, or mostly.
  ...parsed.map((all) => ({ history: [], current: all.at(-1)! })),
  ...parsed.map((all) => ({ history: all.slice(-2, -1), current: all.at(-1)! })),
];

const registry = createRegistry(bundledModels, { runtimeFor: edgeRuntimes() });
const model = registry.get("fraud-gru") as RegisteredModel & { manifest: FraudScoringManifest };

describe("the attribution batch cut at the scored step", () => {
  it("scores every row as one run of the whole batch does, exactly", async () => {
    const attribution = model.runtime.graphs?.attribution;
    expect(attribution).toBeDefined();
    let runs = 0;
    const counted: TensorCapability = {
      run: (feeds, options) => {
        runs++;
        return attribution!.run(feeds, options);
      },
    };
    const split = createFraudScorer({
      ...model,
      runtime: { ...model.runtime, graphs: { attribution: counted } },
    });
    const whole = createFraudScorer({ ...model, runtime: { ...model.runtime, graphs: undefined } });
    await split.load();
    const scores = new Set<number>();
    for (const account of accounts) {
      const before = runs;
      const [fromSplit, fromWhole] = [await split.explain(account), await whole.explain(account)];
      expect(runs).toBe(before + 1); // the attribution graph once, the whole graph not at all
      expect(fromSplit).toEqual(fromWhole);
      scores.add(fromSplit.score);
    }
    // The fixtures hold attacks and ordinary payments: not one score for all.
    expect(scores.size).toBeGreaterThan(accounts.length / 2);

    // All at once: the scorer's dynamic batches of MAX_EXPLAIN_BATCH windows, the same answers.
    const before = runs;
    const together = await Promise.all(accounts.map((account) => split.explain(account)));
    expect(runs - before).toBe(Math.ceil(accounts.length / MAX_EXPLAIN_BATCH));
    expect(together).toEqual(await Promise.all(accounts.map((account) => whole.explain(account))));
  });
});
