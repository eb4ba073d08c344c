// What every model manifest holds whatever its task: name, version, where it runs, its graphs
// (sha256-checked before use); and the pieces the task schemas share.
import { z } from "zod";
import { TensorSpecSchema } from "../tensors/tensor";

export const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, "a lowercase hex sha256");

/** How a model of ours was made; third-party (raw) models have no training of ours. */
export const TrainingSchema = z.object({ script: z.string(), architecture: z.string() }).loose();

/** A file of the model (or the one a graph was made from, as it was then): name, sha256, size. */
const FileSchema = z.object({
  file: z.string().min(1),
  sha256: Sha256Schema,
  bytes: z.number().int().positive(),
});

/** One ONNX graph of a model: its file (sha256-verified before use) and its signature. */
export const GraphSchema = FileSchema.extend({
  inputs: z.array(TensorSpecSchema).min(1),
  outputs: z.array(TensorSpecSchema).min(1),
  /** Set when the file was optimized at build time (scripts/optimize-graphs.mjs) from
   * `source`: the edge then creates its session with optimization disabled. */
  optimized: z
    .object({ level: z.enum(["basic", "extended"]), by: z.string(), source: FileSchema })
    .optional(),
  /** Set when the file was cut out of another of the model's graphs at build time (its nodes
   * and weights as they are there; e.g. scripts/fraud/split-attribution.py): the edge creates
   * its session with optimization disabled, as for the graph it was cut from. */
  derived: z.object({ by: z.string(), source: FileSchema }).optional(),
});
export type Graph = z.infer<typeof GraphSchema>;

/** Whether the graph's file was made at build time (optimized or cut from another graph): its
 * session then skips ORT's optimizer. */
export const builtAhead = (graph: Graph): boolean =>
  graph.optimized !== undefined || graph.derived !== undefined;

/** Where a model's work runs: "wasm" in this isolate, "origin" on a GPU origin. */
export const placements = ["wasm", "origin"] as const;
/** How the origin is reached: OIP v2 (Triton, KServe) for tensors, vLLM's /v1/completions
 * for generation, our tensor stream (Triton's generate_stream route, one OIP tensor per SSE
 * event: README "Tensor-stream protocol") for a diffusion loop. */
export const originProtocols = ["oip-v2", "vllm-completions", "tensor-stream"] as const;
export type OriginProtocol = (typeof originProtocols)[number];

export const BaseManifestSchema = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, "lowercase name: letters, digits, . _ -"),
  version: z.string().min(1),
  description: z.string(),
  runtime: z.enum(placements),
  /** Required where runtime is "origin"; ignored for "wasm". */
  protocol: z.enum(originProtocols).optional(),
  /** The model's graphs by role ("model" is the one single-shot tasks run, "reference" its
   * FP32 original); an origin LLM may ship none to the edge, only its tokenizer. */
  graphs: z.record(z.string().regex(/^[a-z0-9][a-z0-9._-]*$/), GraphSchema),
  /** Load the model while the isolate starts (Triton's model repository at start-up): its
   * files verified, its session created and run once on a tiny input before any request.
   * For models running in the isolate only (a Worker's top level may not do I/O). */
  preload: z.boolean().optional(),
});
