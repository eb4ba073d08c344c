// The shipped tiny LLM's FP32 graph as the origin reads it (verified by its sha256), for the
// decoder tests: FP32, because the INT8 graph's dynamic quantization scales activations over
// the whole batch, so its tokens depend on which rows share a step; FP32's do not.
import { readFileSync } from "node:fs";
import { parseManifest, type GenerationConfig } from "../../origin/manifests";
import { readVerifiedFile } from "../../origin/model-files";

const DIR = "models/tiny-llm";

/** One CPU intra-op thread, as the origin runs each engine on this machine. */
export const ONE_THREAD = { executionProviders: ["cpu"], intraOpThreads: 1 };

export async function tinyLlmFp32(): Promise<{ generation: GenerationConfig; bytes: Uint8Array }> {
  const manifest = parseManifest(
    JSON.parse(readFileSync(`${DIR}/manifest.json`, "utf8")),
    "decoder-fp32",
  );
  if (manifest.kind !== "generation") throw new Error("tiny-llm is not a text-generation manifest");
  return {
    generation: manifest.generation,
    bytes: await readVerifiedFile(DIR, manifest.graph.file, manifest.graph.sha256),
  };
}
