// What the origin reads from each models/<name>/manifest.json: only the fields its engines
// need. A local schema until the shared one (src/models/manifest.ts, being reshaped to
// CONTRACTS.md) lands; both shapes are read: one graph at the top level (`file`, `inputs`,
// `outputs`: the tensor models' manifests before the reshape) or named `graphs` (the
// contract's: a tensor model runs its "model" graph, a text-generation model the one
// `generation.graph` names).
import { z } from "zod";
import { TensorSpecSchema, type TensorSpec } from "../src/runtime/tensor";

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, "a lowercase hex sha256");

const GraphSchema = z.object({
  file: z.string().min(1),
  sha256: Sha256Schema,
  inputs: z.array(TensorSpecSchema).min(1),
  outputs: z.array(TensorSpecSchema).min(1),
});
export type Graph = z.infer<typeof GraphSchema>;

const GenerationSchema = z.object({
  graph: z.string().min(1),
  contextLength: z.number().int().positive(),
  vocabSize: z.number().int().positive(),
  layers: z.number().int().positive(),
  kvHeads: z.number().int().positive(),
  headDim: z.number().int().positive(),
  eosTokenId: z.number().int().min(0),
  stopTokenIds: z.array(z.number().int().min(0)).default([]),
});
export type GenerationConfig = z.infer<typeof GenerationSchema>;

const CommonSchema = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/),
  version: z.string().min(1),
  task: z.string().min(1),
});

const TensorManifestSchema = CommonSchema.extend(GraphSchema.shape);
const GraphsManifestSchema = CommonSchema.extend({ graphs: z.record(z.string(), GraphSchema) });
const GenerationManifestSchema = CommonSchema.extend({
  task: z.literal("text-generation"),
  graphs: z.record(z.string(), GraphSchema),
  generation: GenerationSchema,
});

export type OriginManifest =
  | { kind: "tensor"; name: string; version: string; task: string; graph: Graph }
  | { kind: "generation"; name: string; version: string; task: string; graph: Graph; generation: GenerationConfig };

/**
 * Reads one manifest. `graphOverride` picks another named graph of a text-generation
 * model than `generation.graph` (tests run `decoder-fp32` for exact parity with PyTorch).
 */
export function parseManifest(json: unknown, graphOverride?: string): OriginManifest {
  const common = CommonSchema.loose().parse(json);
  if (common.task === "text-generation") {
    const manifest = GenerationManifestSchema.parse(json);
    const graphName = graphOverride ?? manifest.generation.graph;
    const graph = manifest.graphs[graphName];
    if (graph === undefined) throw new Error(`Model "${manifest.name}" has no graph "${graphName}" (has ${Object.keys(manifest.graphs).join(", ")})`);
    return { kind: "generation", name: manifest.name, version: manifest.version, task: manifest.task, graph, generation: manifest.generation };
  }
  const withGraphs = GraphsManifestSchema.safeParse(json);
  if (withGraphs.success) {
    const manifest = withGraphs.data;
    const graph = manifest.graphs.model;
    if (graph === undefined) throw new Error(`Model "${manifest.name}" has no "model" graph (has ${Object.keys(manifest.graphs).join(", ")})`);
    return { kind: "tensor", name: manifest.name, version: manifest.version, task: manifest.task, graph };
  }
  const manifest = TensorManifestSchema.parse(json);
  const { file, sha256, inputs, outputs } = manifest;
  return { kind: "tensor", name: manifest.name, version: manifest.version, task: manifest.task, graph: { file, sha256, inputs, outputs } };
}

export type { TensorSpec };
