// Loads a text-to-image model on the origin: its three graphs (each verified against the
// manifest's sha256) into onnxruntime-node tensor engines, wrapped as the pipeline's
// DiffusionGraphs, and the engine that batches their UNet runs across requests.
import { diffusionGraphs } from "../../../src/generation/diffusion";
import type { OriginConfig } from "../../config";
import type { DiffusionConfig, DiffusionGraphFiles } from "../../manifests";
import { readVerifiedFile } from "../../model-files";
import type { SessionSettings } from "../onnx-session";
import { createTensorEngine, type TensorEngine } from "../tensor-engine";
import { DiffusionEngine } from "./engine";
import type { DiffusionMetrics } from "./metrics";

export async function loadDiffusionEngine(
  dir: string,
  model: { name: string; graphs: DiffusionGraphFiles; diffusion: DiffusionConfig },
  settings: SessionSettings,
  config: Pick<OriginConfig, "maxBatch" | "maxWaiting">,
  metrics: DiffusionMetrics,
): Promise<DiffusionEngine> {
  const engine = async (name: keyof DiffusionGraphFiles): Promise<TensorEngine> => {
    const graph = model.graphs[name];
    return createTensorEngine(
      graph,
      await readVerifiedFile(dir, graph.file, graph.sha256),
      settings,
    );
  };
  const [textEncoder, unet, vaeDecoder] = await Promise.all([
    engine("text_encoder"),
    engine("unet"),
    engine("vae_decoder"),
  ]);
  const run = (tensor: TensorEngine) => async (feeds: Parameters<TensorEngine["run"]>[0]) =>
    (await tensor.run(feeds)).outputs;
  const graphs = diffusionGraphs(model.diffusion, {
    textEncoder: run(textEncoder),
    unet: run(unet),
    vaeDecoder: run(vaeDecoder),
  });
  const limits = {
    maxRows: Math.max(2, config.maxBatch),
    maxRequests: Math.max(1, config.maxWaiting),
  };
  return new DiffusionEngine(model.name, graphs, model.diffusion, limits, metrics);
}
