// Fraud scoring: featurize windows at the edge → one run of the sequence model → the
// last step's score → LEGIT / SUSPECT / FRAUD by the manifest's validated thresholds.
import { ServiceError } from "../../errors/service-error";
import type { FraudScoringManifest } from "../../models/manifest";
import type { RegisteredModel } from "../../models/registry";
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
  score(accounts: readonly Account[]): Promise<{ results: FraudScore[]; timings: { featurizeMs: number; inferMs: number } }>;
}

export function labelFor(score: number, thresholds: FraudScoringManifest["thresholds"]): FraudLabel {
  if (score >= thresholds.fraud) return "FRAUD";
  if (score >= thresholds.suspect) return "SUSPECT";
  return "LEGIT";
}

export function createFraudScorer(model: RegisteredModel & { manifest: FraudScoringManifest }): FraudScorer {
  const { manifest, runtime } = model;
  const [input] = manifest.inputs;
  const [output] = manifest.outputs;
  if (input === undefined || output === undefined) throw new Error(`Model ${manifest.name} declares no input or output`);
  return {
    manifest,
    load: () => runtime.load(),
    async score(accounts) {
      const results: FraudScore[] = [];
      const timings = { featurizeMs: 0, inferMs: 0 };
      // One run per account: the INT8 graph quantizes activations with one scale per run
      // (DynamicQuantizeLinear), so a batched run would let one card's transactions nudge
      // another's score. A decision must not depend on its batch-mates.
      for (const account of accounts) {
        const started = performance.now();
        const windows = buildWindows([account], manifest.window, manifest.features);
        timings.featurizeMs += performance.now() - started;
        const { outputs, timings: run } = await runtime.run({ [input.name]: { datatype: "FP32", shape: windows.shape, data: windows.data } }, [output.name]);
        timings.inferMs += run.runMs;
        const score = outputs[output.name]?.data[0];
        if (typeof score !== "number") throw new ServiceError(502, "upstream_error", `Model ${manifest.name} returned no ${output.name}`);
        results.push({ score, label: labelFor(score, manifest.thresholds), historyUsed: windows.historyUsed[0] ?? 0 });
      }
      return { results, timings };
    },
  };
}
