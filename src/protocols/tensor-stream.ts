// The tensor-stream protocol between the edge and a diffusion origin: tensors in, named parameters,
// and one OIP tensor object per SSE event back.
import { z } from "zod";

export const STREAM_SCHEDULERS = ["ddim", "euler"] as const;

export const TensorStreamParameters = z
  .object({
    steps: z.number().int().min(1).max(1000).optional(),
    guidance_scale: z.number().min(0).max(50).optional(),
    scheduler: z.enum(STREAM_SCHEDULERS).optional(),
    /**
     * Used only when the request carries no `noise` input: the origin draws it (same generator).
     */
    seed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    /**
     * Stream the predicted clean latent every this many steps (and at the last); 0 = only the
     * image. Default 1.
     */
    preview_every: z.number().int().min(0).max(1000).optional(),
  })
  .strict();
export type TensorStreamParameters = z.infer<typeof TensorStreamParameters>;

const Shape = z.array(z.number().int().min(0)).max(8);

export const InputTensor = z.object({
  name: z.string().min(1),
  datatype: z.enum(["INT64", "FP32"]),
  shape: Shape,
  data: z.array(z.number()).max(1_000_000),
  parameters: z.object({}).loose().optional(),
});

export const TensorStreamRequest = z
  .object({
    id: z.string().max(256).optional(),
    inputs: z.array(InputTensor).min(1).max(3),
    parameters: TensorStreamParameters.optional(),
  })
  .strict();
export type TensorStreamRequest = z.infer<typeof TensorStreamRequest>;

export const OutputTensor = z.object({
  name: z.string(),
  datatype: z.literal("FP32"),
  shape: Shape,
  data: z.array(z.number()),
});

/**
 * Triton's generate_stream route shape, but because Triton's generate events are flat text fields,
 * a schema of our own for the events (docs/origin-protocols.md):
 *   data: {"step": k, "final": false, "outputs": [{"name": "latent", "datatype": "FP32",
 *          "shape": [n, C, H, W], "data": [...]}]}
 * the last with `final: true` and the decoded `image` [n, 1, H, W] in [0, 1], then `data: [DONE]`;
 * a failure after the first event is `data: {"error": {...}}` then [DONE].
 */
export const TensorStreamEvent = z.object({
  id: z.string().optional(),
  step: z.number().int().min(0),
  final: z.boolean(),
  outputs: z.array(OutputTensor).min(1),
});
export type TensorStreamEvent = z.infer<typeof TensorStreamEvent>;

export const TensorStreamError = z.object({
  error: z.union([z.string(), z.object({ message: z.string() }).loose()]),
});

export function streamErrorMessage(event: z.infer<typeof TensorStreamError>): string {
  return typeof event.error === "string" ? event.error : event.error.message;
}
