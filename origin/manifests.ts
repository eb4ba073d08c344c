// What the origin reads from each models/<name>/manifest.json: the shared manifest
// (src/models/manifest.ts, validated by the same zod schema as at the edge), reduced to the
// graph its engine runs — a tensor model its "model" graph, a text-generation model the
// one `generation.graph` names (or an override: tests run `decoder-fp32` for exact parity
// with PyTorch).
import { ManifestSchema, primaryGraphName, type Graph, type TextGenerationManifest } from "../src/models/manifest";

export type { Graph };
export type GenerationConfig = TextGenerationManifest["generation"];

export type OriginManifest =
  | { kind: "tensor"; name: string; version: string; task: string; graph: Graph }
  | { kind: "generation"; name: string; version: string; task: string; graph: Graph; generation: GenerationConfig };

/** Reads one manifest; a missing graph is a clear error naming the ones there are. */
export function parseManifest(json: unknown, graphOverride?: string): OriginManifest {
  const manifest = ManifestSchema.parse(json);
  const { name, version, task } = manifest;
  // A text-to-image pipeline is hosted here by its UNet (over OIP) until the diffusion loop lands.
  const graphName = manifest.task === "text-generation" ? (graphOverride ?? manifest.generation.graph) : primaryGraphName(manifest);
  const graph = manifest.graphs[graphName];
  if (graph === undefined) throw new Error(`Model "${name}" has no graph "${graphName}" (has ${Object.keys(manifest.graphs).join(", ")})`);
  return manifest.task === "text-generation"
    ? { kind: "generation", name, version, task, graph, generation: manifest.generation }
    : { kind: "tensor", name, version, task, graph };
}
