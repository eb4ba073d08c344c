// The model manifest, the single source of truth for what a model is: the union of the task
// manifests, the checks across their fields, and every manifest type, exported from here.
import { z } from "zod";
import type { Graph } from "./manifest-base";
import { DIFFUSION_GRAPHS, TextGenerationSchema, TextToImageSchema } from "./generation-manifests";
import {
  FraudScoringSchema,
  ImageClassificationSchema,
  RawSchema,
  TextClassificationSchema,
} from "./single-shot-manifests";

export {
  builtAhead,
  GraphSchema,
  originProtocols,
  placements,
  type Graph,
  type OriginProtocol,
} from "./manifest-base";
export {
  DIFFUSION_GRAPHS,
  TextGenerationSchema,
  TextToImageSchema,
  toolCallParsers,
  type TextGenerationManifest,
  type TextToImageManifest,
  type ToolCallParser,
} from "./generation-manifests";
export {
  FraudScoringSchema,
  ImageClassificationSchema,
  RawSchema,
  TextClassificationSchema,
  type FraudFeatures,
  type FraudScoringManifest,
  type ImageClassificationManifest,
  type TextClassificationManifest,
} from "./single-shot-manifests";

export const ManifestSchema = z
  .discriminatedUnion("task", [
    TextClassificationSchema,
    ImageClassificationSchema,
    FraudScoringSchema,
    RawSchema,
    TextGenerationSchema,
    TextToImageSchema,
  ])
  .superRefine((manifest, context) => {
    if (manifest.runtime === "origin" && manifest.protocol === undefined) {
      context.addIssue({
        code: "custom",
        path: ["protocol"],
        message: 'runtime "origin" needs a protocol',
      });
    }
    if (manifest.preload === true && manifest.runtime !== "wasm") {
      context.addIssue({
        code: "custom",
        path: ["preload"],
        message: 'only a model with runtime "wasm" can be preloaded',
      });
    }
    if (manifest.task === "text-to-image") {
      for (const graph of DIFFUSION_GRAPHS) {
        if (manifest.graphs[graph] === undefined)
          context.addIssue({
            code: "custom",
            path: ["graphs", graph],
            message: `graph "${graph}" is missing`,
          });
      }
      if (manifest.diffusion.preview.factors.length !== manifest.diffusion.latentShape[0]) {
        context.addIssue({
          code: "custom",
          path: ["diffusion", "preview", "factors"],
          message: "one preview factor per latent channel",
        });
      }
      return;
    }
    const needed = primaryGraphName(manifest);
    const atEdge = manifest.runtime === "wasm" || manifest.protocol === "oip-v2";
    if (atEdge && manifest.graphs[needed] === undefined) {
      context.addIssue({
        code: "custom",
        path: ["graphs", needed],
        message: `graph "${needed}" is missing`,
      });
    }
  });

/** The graph a model's tensor capability runs: "model" for single-shot tasks, the decoder
 * named by `generation.graph` for text generation. */
export function primaryGraphName(manifest: {
  task: string;
  generation?: { graph: string };
}): string {
  return manifest.generation?.graph ?? "model";
}

/** The primary graph's declaration, or undefined where the edge has none (an origin LLM). */
export function primaryGraph(manifest: Manifest): Graph | undefined {
  // three graphs, run by the diffusion loop
  if (manifest.task === "text-to-image") return undefined;
  return manifest.graphs[primaryGraphName(manifest)];
}

export type Manifest = z.infer<typeof ManifestSchema>;
