// Fraud scoring: featurize windows at the edge → one run of the sequence model → the
// last step's score → LEGIT / SUSPECT / FRAUD by the manifest's validated thresholds.
import { ServiceError } from "../../errors/service-error";
import type { FraudScoringManifest } from "../../models/manifest";
import { dynamicBatcher, type TensorCapability } from "../../runtime";
import type { RegisteredModel } from "../registered-model";
import { tensorGraph } from "../tensor-graph";
import {
  type Attribution,
  attribute,
  attributionBatcher,
  attributionSplitter,
} from "./attribution";
import { buildWindows, type Account } from "./windows";

export type FraudLabel = FraudScoringManifest["labels"][number];

export interface FraudScore {
  score: number;
  label: FraudLabel;
  historyUsed: number;
}

export interface FraudScorer {
  readonly manifest: FraudScoringManifest;
  load(): Promise<void>;
  score(
    accounts: readonly Account[],
    signal?: AbortSignal,
  ): Promise<{ results: FraudScore[]; timings: { featurizeMs: number; inferMs: number } }>;
  /**
   * One account's score with its attribution over the feature groups, in the same run (a batch
   * of the window and its attribution rows; no row's score depends on its batch-mates).
   */
  explain(account: Account, signal?: AbortSignal): Promise<FraudScore & Attribution>;
}

export function labelFor(
  score: number,
  thresholds: FraudScoringManifest["thresholds"],
): FraudLabel {
  if (score >= thresholds.fraud) return "FRAUD";
  if (score >= thresholds.suspect) return "SUSPECT";
  return "LEGIT";
}

/**
 * Decisions explained together in one run, at most this many: a run's fixed cost is per graph node
 * (~2.7 µs each in workerd, 193 nodes), its rows' cost small beside it, so a batch of 4 costs each
 * decision about half a lone run (docs/fraud.md "Latency"); past 8 a batch mostly adds latency.
 */
export const MAX_EXPLAIN_BATCH = 8;

/** Spare window arrays a scorer keeps (about the decisions in flight; 5 KB each). */
const MAX_SPARE_WINDOWS = 32;

/**
 * The attribution batch's scores from the model cut at its scored step (the runtime's
 * attribution graph): the same scores as one run of the whole batch
 * (test/unit/tasks/fraud/attribution-split.test.ts), a seventh of its recurrent work. The windows
 * explained in the same turn of the isolate (every card's decisions share its model) run as one
 * batch. Undefined where the runtime has no such graph.
 */
function attributionRuns(
  graphs: Readonly<Record<string, TensorCapability>> | undefined,
  manifest: FraudScoringManifest,
): ((single: Float32Array, signal?: AbortSignal) => Promise<Float32Array>) | undefined {
  const graph = graphs?.attribution;
  if (graph === undefined) return undefined;
  const inputs = attributionSplitter(manifest.window, manifest.features);
  return dynamicBatcher(
    async (singles: readonly Float32Array[]) => {
      const { transactions, step, stateRows, release } = inputs.batch(singles);
      // One batch serves several requests, so no one request's signal stops it.
      const { outputs } = await graph
        .run({
          transactions: { datatype: "FP32", ...transactions },
          step: { datatype: "FP32", ...step },
          state_rows: { datatype: "INT64", ...stateRows },
        })
        .finally(release);
      const scores = outputs.scores?.data;
      if (!(scores instanceof Float32Array) || scores.length !== singles.length * inputs.rows)
        throw new ServiceError(502, "upstream_error", `Model ${manifest.name} returned no scores`);
      return singles.map((_, j) => scores.subarray(j * inputs.rows, (j + 1) * inputs.rows));
    },
    { name: `${manifest.name}.explain`, maxBatch: MAX_EXPLAIN_BATCH },
  );
}

export function createFraudScorer(
  model: RegisteredModel & { manifest: FraudScoringManifest },
): FraudScorer {
  const { manifest, runtime } = model;
  const { graph, tensors } = tensorGraph(model);
  const [input] = graph.inputs;
  const [output] = graph.outputs;
  if (input === undefined || output === undefined)
    throw new Error(`Model ${manifest.name} declares no input or output`);
  const run = async (windows: { data: Float32Array; shape: number[] }, signal?: AbortSignal) => {
    const { outputs, timings } = await tensors.run(
      { [input.name]: { datatype: "FP32", shape: windows.shape, data: windows.data } },
      { outputNames: [output.name], signal },
    );
    const scores = outputs[output.name]?.data;
    if (!(scores instanceof Float32Array) || scores.length !== windows.shape[1]) {
      throw new ServiceError(
        502,
        "upstream_error",
        `Model ${manifest.name} returned no ${output.name} per account`,
      );
    }
    return { scores, timings };
  };
  const batchOf = attributionBatcher(manifest.window, manifest.features);
  const split = attributionRuns(runtime.graphs, manifest);
  /**
   * Explained windows' arrays, refilled by later decisions: a window waits a turn for its batch,
   * so a new array each decision would often outlive a young collection.
   */
  const spareWindows: Float32Array[] = [];
  return {
    manifest,
    load: () => runtime.load(),
    async explain(account, signal) {
      const single = buildWindows(
        [account],
        manifest.window,
        manifest.features,
        spareWindows.pop(),
      );
      let scores: Float32Array;
      try {
        scores =
          split === undefined
            ? (await run(batchOf(single.data), signal)).scores
            : await split(single.data, signal);
      } finally {
        // Read by its batch's run, which has settled (or left the batch unread): free to refill.
        if (spareWindows.length < MAX_SPARE_WINDOWS) spareWindows.push(single.data);
      }
      const score = scores[0] ?? Number.NaN;
      return {
        score,
        label: labelFor(score, manifest.thresholds),
        historyUsed: single.historyUsed[0] ?? 0,
        ...attribute(scores),
      };
    },
    async score(accounts, signal) {
      const started = performance.now();
      const windows = buildWindows(accounts, manifest.window, manifest.features);
      const featurized = performance.now();
      // One run for the whole batch: the INT8 graph quantizes activations with calibrated
      // constants (scripts/quantize.py --calibration), so no account's score depends on
      // its batch-mates (test/workers/fraud/score.test.ts holds it to that).
      const { scores, timings } = await run(windows, signal);
      return {
        results: Array.from(scores, (score, i) => ({
          score,
          label: labelFor(score, manifest.thresholds),
          historyUsed: windows.historyUsed[i] ?? 0,
        })),
        timings: { featurizeMs: featurized - started, inferMs: timings.runMs },
      };
    },
  };
}
