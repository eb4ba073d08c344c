// What the origin reads from each models/<name>/manifest.json: the shared manifest
// (src/models/manifest.ts, validated by the same zod schema as at the edge), reduced to the
// graph its engine runs — a tensor model its "model" graph, a text-generation model the
// one `generation.graph` names (or an override: tests run `decoder-fp32` for exact parity
// with PyTorch).
import {
  type DIFFUSION_GRAPHS,
  ManifestSchema,
  type Graph,
  type TextGenerationManifest,
  type TextToImageManifest,
} from "../src/models/manifest";

export type { Graph };
export type GenerationConfig = TextGenerationManifest["generation"];
export type DiffusionConfig = TextToImageManifest["diffusion"];
export type TokenizerRef = TextGenerationManifest["tokenizer"];
export type DiffusionGraphFiles = Record<(typeof DIFFUSION_GRAPHS)[number], Graph>;

export type OriginManifest =
  | { kind: "tensor"; name: string; version: string; task: string; graph: Graph }
  /** `tokenizer`: the file structured outputs read the tokens' bytes from. */
  | {
      kind: "generation";
      name: string;
      version: string;
      task: string;
      graph: Graph;
      generation: GenerationConfig;
      tokenizer: TokenizerRef;
    }
  | {
      kind: "diffusion";
      name: string;
      version: string;
      task: string;
      graph: Graph;
      graphs: DiffusionGraphFiles;
      diffusion: DiffusionConfig;
    };

/** Reads one manifest; a missing graph is a clear error naming the ones there are. */
export function parseManifest(json: unknown, graphOverride?: string): OriginManifest {
  const manifest = ManifestSchema.parse(json);
  const { name, version, task } = manifest;
  if (manifest.task === "text-to-image") {
    // The schema checked that all three graphs are there; `graph` is the UNet (the loop's engine).
    const pick = (graph: (typeof DIFFUSION_GRAPHS)[number]): Graph => {
      const found = manifest.graphs[graph];
      if (found === undefined) throw new Error(`Model "${name}" has no graph "${graph}"`);
      return found;
    };
    const graphs = {
      text_encoder: pick("text_encoder"),
      unet: pick("unet"),
      vae_decoder: pick("vae_decoder"),
    };
    return {
      kind: "diffusion",
      name,
      version,
      task,
      graph: graphs.unet,
      graphs,
      diffusion: manifest.diffusion,
    };
  }
  const graphName =
    manifest.task === "text-generation" ? (graphOverride ?? manifest.generation.graph) : "model";
  const graph = manifest.graphs[graphName];
  if (graph === undefined)
    throw new Error(
      `Model "${name}" has no graph "${graphName}" ` +
        `(has ${Object.keys(manifest.graphs).join(", ")})`,
    );
  return manifest.task === "text-generation"
    ? {
        kind: "generation",
        name,
        version,
        task,
        graph,
        generation: manifest.generation,
        tokenizer: manifest.tokenizer,
      }
    : { kind: "tensor", name, version, task, graph };
}
