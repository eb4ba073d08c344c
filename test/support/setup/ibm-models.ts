// Global setup (Node side) for the IBM compatibility test: reads IBM's published fraud
// models from ../shared/external when present (they are third-party files, never copied
// into this repo), computes onnxruntime-node's outputs on a seeded input, and hands both
// to the workerd tests. Without the folder the compatibility test is skipped.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import * as ort from "onnxruntime-node";
import type { TestProject } from "vitest/node";
// @ts-expect-error -- plain ESM JavaScript shared with the benchmark scripts
import { tabFormerLikeInput } from "../../../scripts/lib/seeded-input.mjs";

const DIR = "../shared/external/ibm-ccf";
const MODELS = [
  { name: "ibm-ccf-gru", file: "ccf_gru_static_tf2onnx_OS_new.onnx", output: "dense" },
  { name: "ibm-ccf-lstm", file: "ccf_lstm_static_tf2onnx_OS_new.onnx", output: "dense_1" },
];
const SHAPE = [7, 16, 220];

export interface IbmModel {
  name: string;
  output: string;
  base64: string;
  sha256: string;
  bytes: number;
  input: number[];
  native: number[];
}

declare module "vitest" {
  export interface ProvidedContext {
    ibmModels: IbmModel[];
  }
}

export default async function setup(project: TestProject): Promise<void> {
  if (!existsSync(DIR)) {
    project.provide("ibmModels", []);
    return;
  }
  const input: Float32Array = tabFormerLikeInput(7, 16, 220, 42);
  const models: IbmModel[] = [];
  for (const model of MODELS) {
    const bytes = readFileSync(`${DIR}/${model.file}`);
    const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1 });
    const result = await session.run({ input: new ort.Tensor("float32", input, SHAPE) });
    models.push({
      name: model.name,
      output: model.output,
      base64: bytes.toString("base64"),
      sha256: createHash("sha256").update(bytes).digest("hex"),
      bytes: bytes.length,
      input: Array.from(input),
      native: Array.from(result[model.output]!.data as Float32Array),
    });
  }
  project.provide("ibmModels", models);
}
