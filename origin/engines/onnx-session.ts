// The one place the origin creates onnxruntime-node sessions: execution providers (CUDA
// where this build has it, CPU otherwise) and one intra-op thread per engine by default,
// so that engines sharing a small machine do not fight over its cores.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as ort from "onnxruntime-node";

export interface SessionSettings {
  /** Preference order; undefined = "cuda" then "cpu" where this onnxruntime-node has CUDA. */
  executionProviders: readonly string[] | undefined;
  intraOpThreads: number;
}

/** The execution providers this process will ask for. */
export function executionProvidersFor(settings: SessionSettings): string[] {
  if (settings.executionProviders !== undefined) return [...settings.executionProviders];
  const cuda = ort.listSupportedBackends().find((backend) => backend.name === "cuda");
  return cuda !== undefined && (cuda.bundled || cudaBinariesInstalled())
    ? ["cuda", "cpu"]
    : ["cpu"];
}

/**
 * The CUDA provider is a separate download (skipped by ONNXRUNTIME_NODE_INSTALL=skip): is it there?
 */
function cudaBinariesInstalled(): boolean {
  const binDir = join(
    dirname(createRequire(import.meta.url).resolve("onnxruntime-node")),
    "..",
    "bin",
    "napi-v6",
    process.platform,
    process.arch,
  );
  return existsSync(join(binDir, "libonnxruntime_providers_cuda.so"));
}

export function createSession(
  model: Uint8Array,
  settings: SessionSettings,
): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(model, {
    executionProviders: executionProvidersFor(settings),
    intraOpNumThreads: settings.intraOpThreads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
  });
}

export { ort };
