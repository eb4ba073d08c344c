// The pipeline's three graphs as DiffusionGraphs, over any "run this graph on these
// tensors" function: the isolate's TensorCapability (onnxruntime-web) and the origin's
// tensor engines (onnxruntime-node) both fit, so the loop is written once.
import type { Tensor } from "../../tensors/tensor";
import type { DiffusionGraphs, DiffusionSpec } from "./pipeline";

export type RunGraph = (feeds: Record<string, Tensor>) => Promise<Record<string, Tensor>>;

function float32(outputs: Record<string, Tensor>, name: string, graph: string): Float32Array {
  const tensor = outputs[name];
  if (tensor === undefined || !(tensor.data instanceof Float32Array))
    throw new Error(`The ${graph} graph returned no FP32 "${name}"`);
  return tensor.data;
}

export function diffusionGraphs(
  spec: Pick<DiffusionSpec, "promptLength" | "latentShape">,
  run: { textEncoder: RunGraph; unet: RunGraph; vaeDecoder: RunGraph },
): DiffusionGraphs {
  return {
    async encodeText(inputIds, attentionMask, rows) {
      const shape = [rows, spec.promptLength];
      const outputs = await run.textEncoder({
        input_ids: { datatype: "INT64", shape, data: inputIds },
        attention_mask: { datatype: "INT64", shape, data: attentionMask },
      });
      return float32(outputs, "text_embeds", "text_encoder").slice();
    },
    async unet({ sample, timestep, textEmbeds, rows }) {
      const outputs = await run.unet({
        sample: { datatype: "FP32", shape: [rows, ...spec.latentShape], data: sample },
        timestep: { datatype: "FP32", shape: [rows], data: timestep },
        text_embeds: {
          datatype: "FP32",
          shape: [rows, textEmbeds.length / rows],
          data: textEmbeds,
        },
      });
      return float32(outputs, "noise_pred", "unet").slice();
    },
    async decode(latent, rows) {
      const outputs = await run.vaeDecoder({
        latent: { datatype: "FP32", shape: [rows, ...spec.latentShape], data: latent },
      });
      return float32(outputs, "image", "vae_decoder").slice();
    },
  };
}
