// The fraud model cut at its scored step (scripts/fraud/split-attribution.py), run by
// onnxruntime-web in Node: over random windows, with history, part history and none, the
// attribution graph gives exactly the whole graph's scores for every row of the attribution batch,
// with each batch size's input arrays refilled run after run.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import * as ort from "onnxruntime-web";
import { beforeAll, describe, expect, it } from "vitest";
import { FraudScoringSchema } from "../../../../src/models/manifest";
import { attributionBatcher, attributionSplitter } from "../../../../src/tasks/fraud/attribution";

const dir = "models/fraud-gru";
const manifest = FraudScoringSchema.parse(JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8")));
const { window, features } = manifest;

/** A graph's session, its file checked against the manifest first. */
async function session(graph: string) {
  const declared = manifest.graphs[graph]!;
  const bytes = readFileSync(`${dir}/${declared.file}`);
  expect(createHash("sha256").update(bytes).digest("hex")).toBe(declared.sha256);
  return ort.InferenceSession.create(bytes, {
    executionProviders: ["wasm"],
    graphOptimizationLevel: "disabled",
  });
}

let seed = 11;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};

describe("the attribution split", () => {
  let sessions: Record<"whole" | "attribution", ort.InferenceSession>;
  beforeAll(async () => {
    ort.env.wasm.numThreads = 1;
    sessions = { whole: await session("model"), attribution: await session("attribution") };
  });

  it("derives the graph from the shipped one", () => {
    expect(manifest.graphs.attribution?.derived?.source.sha256).toBe(manifest.graphs.model?.sha256);
  });

  it("scores 60 windows' attribution rows as the whole graph does, exactly, alone or stacked, in refilled arrays", async () => {
    const batch = attributionBatcher(window, features);
    const split = attributionSplitter(window, features);
    const tensor = ({ data, shape }: { data: Float32Array; shape: number[] }) =>
      new ort.Tensor("float32", data, shape);
    /** The arrays each batch size ran in: released after each run, so one set per size. */
    const arrays = new Map<number, Set<Float32Array>>();
    const run = async (singles: Float32Array[]) => {
      const { transactions, step, stateRows, release } = split.batch(singles);
      arrays.set(singles.length, (arrays.get(singles.length) ?? new Set()).add(transactions.data));
      const { scores } = await sessions.attribution
        .run({
          transactions: tensor(transactions),
          step: tensor(step),
          state_rows: new ort.Tensor("int64", stateRows.data, stateRows.shape),
        })
        .finally(release);
      const data = scores!.data as Float32Array;
      expect(data.length).toBe(singles.length * split.rows);
      return singles.map((_, j) => data.subarray(j * split.rows, (j + 1) * split.rows));
    };
    const singles: Float32Array[] = [];
    const wholes: Float32Array[] = [];
    for (let trial = 0; trial < 60; trial++) {
      // Sparse one-hot-like features with a few real values; the first `empty` steps are padding.
      const empty = trial % 7;
      const single = Float32Array.from({ length: window * features.count }, (_, i) =>
        i < empty * features.count || random() > 0.12 ? 0 : random() < 0.5 ? 1 : random(),
      );
      const whole = (await sessions.whole.run({ transactions: tensor(batch(single)) })).scores!
        .data as Float32Array;
      expect((await run([single]))[0]).toEqual(whole);
      expect(new Set(whole).size).toBeGreaterThan(1);
      singles.push(single);
      wholes.push(whole);
    }
    // Stacked as the scorer's dynamic batches stack them (2 to 8 windows a run).
    for (let start = 0, size = 2; start < singles.length; start += size, size = (size % 8) + 2) {
      const stacked = await run(singles.slice(start, start + size));
      stacked.forEach((scores, j) => expect(scores).toEqual(wholes[start + j]));
    }
    expect(arrays.get(1)?.size).toBe(1);
    expect([...arrays.values()].every((set) => set.size === 1)).toBe(true);
  });

  it("gives a batch taken before the last one of its size was released arrays of its own", () => {
    const split = attributionSplitter(window, features);
    const single = new Float32Array(window * features.count).fill(1);
    const first = split.batch([single, single]);
    const second = split.batch([single, single]);
    expect(second.transactions.data).not.toBe(first.transactions.data);
    expect(second.step.data).not.toBe(first.step.data);
    first.release();
    expect(split.batch([single, single]).transactions.data).toBe(first.transactions.data);
  });
});
