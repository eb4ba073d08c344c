// The tensor-stream capability in this isolate: the diffusion loop (src/generation/diffusion)
// over the pipeline's three graphs, each run by onnxruntime-web through the WASM runtime —
// the same loop, scheduler math and noise as the origin's, so a seed gives the same image.
import {
  diffusionGraphs,
  diffusionLoop,
  type DiffusionSpec,
  type SchedulerName,
} from "../../generation/diffusion";
import { ServiceError } from "../../errors/service-error";
import { STREAM_SCHEDULERS } from "../../protocols/tensor-stream";
import type { Tensor } from "../../tensors/tensor";
import type { InferenceRuntime, TensorCapability, TensorStreamCapability } from "../runtime";

export interface DiffusionLoopGraphs {
  textEncoder: InferenceRuntime;
  unet: InferenceRuntime;
  vaeDecoder: InferenceRuntime;
}

function tensorsOf(runtime: InferenceRuntime): TensorCapability {
  if (runtime.tensors === undefined) throw new Error("the WASM runtime offers tensors");
  return runtime.tensors;
}

const integer = (value: unknown, fallback: number) =>
  typeof value === "number" && Number.isInteger(value) ? value : fallback;
const schedulerOf = (value: unknown, fallback: SchedulerName): SchedulerName =>
  STREAM_SCHEDULERS.find((name) => name === value) ?? fallback;

/** A runtime whose loop runs here; `defaults` are the manifest's (steps, guidance, scheduler). */
export function createDiffusionLoopRuntime(
  graphs: DiffusionLoopGraphs,
  spec: DiffusionSpec,
  defaults: { steps: number; guidanceScale: number; scheduler: SchedulerName },
): InferenceRuntime {
  const runner =
    (runtime: InferenceRuntime, signal: AbortSignal) => async (feeds: Record<string, Tensor>) =>
      (await tensorsOf(runtime).run(feeds, { signal })).outputs;
  const tensorStream: TensorStreamCapability = {
    async *stream(feeds, { parameters = {}, signal }) {
      const ids = feeds.input_ids;
      const noise = feeds.noise;
      if (
        ids === undefined ||
        !(ids.data instanceof BigInt64Array) ||
        noise === undefined ||
        !(noise.data instanceof Float32Array)
      ) {
        throw new ServiceError(
          422,
          "unprocessable_input",
          "The diffusion loop takes input_ids (INT64) and noise (FP32)",
          { field: "inputs" },
        );
      }
      const loopGraphs = diffusionGraphs(spec, {
        textEncoder: runner(graphs.textEncoder, signal),
        unet: runner(graphs.unet, signal),
        vaeDecoder: runner(graphs.vaeDecoder, signal),
      });
      const guidance = parameters.guidance_scale;
      const request = {
        inputIds: ids.data,
        noise: noise.data,
        n: ids.shape[0] ?? 1,
        params: {
          steps: integer(parameters.steps, defaults.steps),
          guidanceScale: typeof guidance === "number" ? guidance : defaults.guidanceScale,
          scheduler: schedulerOf(parameters.scheduler, defaults.scheduler),
        },
        previewEvery: integer(parameters.preview_every, 1),
      };
      yield* diffusionLoop(loopGraphs, spec, request, signal);
    },
  };
  return {
    kind: "wasm",
    async load(signal) {
      await Promise.all([
        graphs.textEncoder.load(signal),
        graphs.unet.load(signal),
        graphs.vaeDecoder.load(signal),
      ]);
    },
    tensorStream,
  };
}
