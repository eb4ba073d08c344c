// The model manifest: the single source of truth for what a model is, where it runs,
// how its inputs are prepared and how well it did on held-out data.
import { z } from "zod";
import { TensorSpecSchema } from "../tensors/tensor";

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, "a lowercase hex sha256");

const MetricsSchema = z.object({
  accuracy: z.number().min(0).max(1),
  precision: z.number().min(0).max(1),
  recall: z.number().min(0).max(1),
  f1: z.number().min(0).max(1),
});

const TokenizerSchema = z.object({
  file: z.string().min(1),
  sha256: Sha256Schema,
  /** Ids kept per text (the first maxLength). */
  maxLength: z.number().int().positive(),
  /** Characters kept before tokenizing, so a huge text never costs more than this. */
  maxChars: z.number().int().positive(),
  padTokenId: z.number().int().min(0),
});

/** How a model of ours was made; third-party (raw) models have no training of ours. */
const TrainingSchema = z.object({ script: z.string(), architecture: z.string() }).loose();

const TextClassificationManifestSchema = z.object({
  task: z.literal("text-classification"),
  labels: z.array(z.string().min(1)).min(2),
  tokenizer: TokenizerSchema,
  training: TrainingSchema,
  evaluation: z.object({
    dataset: z.string(),
    split: z.string(),
    examples: z.number().int().positive(),
    fp32: MetricsSchema,
    int8: MetricsSchema,
    agreement: z.number().min(0).max(1),
    sizeRatio: z.number().positive(),
  }),
});

/** How an image becomes the model's input tensor (src/images/): "mnist" = luminance, ink
 * polarity from the border, bounding box fitted into 20×20 and centred by mass in 28×28. */
const ImagePreprocessingSchema = z.object({
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  preprocess: z.literal("mnist"),
  ink: z.literal("white-on-black"),
  description: z.string().optional(),
});

const ImageClassificationManifestSchema = z.object({
  task: z.literal("image-classification"),
  labels: z.array(z.string().min(1)).min(2),
  image: ImagePreprocessingSchema,
  training: TrainingSchema,
  evaluation: z
    .object({
      dataset: z.string(),
      split: z.string(),
      examples: z.number().int().positive(),
      fp32: z.object({ accuracy: z.number().min(0).max(1) }).loose(),
      int8: z.object({ accuracy: z.number().min(0).max(1) }).loose(),
      agreement: z.number().min(0).max(1),
    })
    .loose(),
});

/** A label-encoded column: its classes (sorted) and, per decimal digit, the digit values seen. */
const EncodedColumnSchema = z.object({
  classes: z.array(z.string()).min(1),
  digits: z.array(z.array(z.number().int().min(0).max(9))).length(5),
});

const ScaleSchema = z.object({ min: z.number(), max: z.number() });

const PrecisionRecallSchema = z.object({ precision: z.number(), recall: z.number() });

const FraudScoringManifestSchema = z.object({
  task: z.literal("fraud-scoring"),
  training: TrainingSchema,
  labels: z.tuple([z.literal("LEGIT"), z.literal("SUSPECT"), z.literal("FRAUD")]),
  /** Transactions per window: the current one and the ones before it. */
  window: z.number().int().min(1),
  /** IBM's feature recipe, fitted on the training period (see src/tasks/fraud/featurize.ts). */
  features: z.object({
    count: z.number().int().positive(),
    merchantState: EncodedColumnSchema,
    zip: z.object({ digits: z.array(z.array(z.number().int().min(0).max(9))).length(5) }),
    merchantName: EncodedColumnSchema,
    merchantCity: EncodedColumnSchema,
    mcc: EncodedColumnSchema,
    useChip: z.object({ classes: z.array(z.string()).min(1) }),
    errors: z.object({ classes: z.array(z.string()).min(1) }),
    time: z.object({ minMs: z.number(), maxMs: z.number() }),
    amount: ScaleSchema,
  }),
  thresholds: z
    .object({
      suspect: z.number().min(0).max(1),
      fraud: z.number().min(0).max(1),
      validation: z.object({ suspect: PrecisionRecallSchema, fraud: PrecisionRecallSchema }),
    })
    .loose(),
  evaluation: z
    .object({
      dataset: z.string(),
      split: z.string(),
      examples: z.number().int().positive(),
      fp32: z.object({ auprc: z.number() }),
      int8: z.object({ auprc: z.number() }),
    })
    .loose(),
});

/** One ONNX graph of a model: its file (sha256-verified before use) and its signature. */
export const GraphSchema = z.object({
  file: z.string().min(1),
  sha256: Sha256Schema,
  bytes: z.number().int().positive(),
  inputs: z.array(TensorSpecSchema).min(1),
  outputs: z.array(TensorSpecSchema).min(1),
  /** Set when the file was optimized at build time (scripts/optimize-graphs.mjs) from
   * `source`: the edge then creates its session with optimization disabled. */
  optimized: z
    .object({
      level: z.enum(["basic", "extended"]),
      by: z.string(),
      source: z.object({
        file: z.string().min(1),
        sha256: Sha256Schema,
        bytes: z.number().int().positive(),
      }),
    })
    .optional(),
});
export type Graph = z.infer<typeof GraphSchema>;

/** Where a model's work runs: "wasm" in this isolate, "origin" on a GPU origin. */
export const placements = ["wasm", "origin"] as const;
/** How the origin is reached: OIP v2 (Triton, KServe) for tensors, vLLM's /v1/completions
 * for generation, our tensor stream (Triton's generate_stream route, one OIP tensor per SSE
 * event: README "Tensor-stream protocol") for a diffusion loop. */
export const originProtocols = ["oip-v2", "vllm-completions", "tensor-stream"] as const;
export type OriginProtocol = (typeof originProtocols)[number];

const BaseManifestSchema = z.object({
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

/**
 * Tensors in, tensors out: served over the Open Inference Protocol only (e.g. third-party graphs).
 */
const RawManifestSchema = z.object({ task: z.literal("raw") });

/**
 * The tool-call formats the edge reads for tool_choice "auto", by vLLM's --tool-call-parser
 * names: "hermes" = `<tool_call>{"name": …, "arguments": …}</tool_call>` (Qwen 2.5/3, Hermes);
 * "llama3_json" and "llama4_json" = an output of `{"name": …, "parameters": …}` objects, `;`
 * between them, perhaps after `<|python_tag|>` (Llama 3.1–3.3, Llama 4); "mistral" = calls
 * after `[TOOL_CALLS]`, `name{…}` per call or a `[{"name": …, "arguments": …}]` list (Mistral);
 * "pythonic" = a Python list of calls with keyword arguments, `[f(a=1), g()]` (Llama 3.2 and 4);
 * "llama4_pythonic" = the same, perhaps inside <|python_start|> … <|python_end|> (Llama 4).
 */
export const toolCallParsers = [
  "hermes",
  "llama3_json",
  "llama4_json",
  "mistral",
  "pythonic",
  "llama4_pythonic",
] as const;
export type ToolCallParser = (typeof toolCallParsers)[number];

const TextGenerationManifestSchema = z.object({
  task: z.literal("text-generation"),
  tokenizer: z.object({
    file: z.string().min(1),
    sha256: Sha256Schema,
    bytes: z.number().int().positive(),
  }),
  generation: z.object({
    /** The graph both the in-isolate loop and the origin run (tests switch it to an FP32 one). */
    graph: z.string().min(1),
    contextLength: z.number().int().positive(),
    vocabSize: z.number().int().positive(),
    layers: z.number().int().positive(),
    kvHeads: z.number().int().positive(),
    headDim: z.number().int().positive(),
    bosTokenId: z.number().int().min(0).optional(),
    eosTokenId: z.number().int().min(0),
    stopTokenIds: z.array(z.number().int().min(0)),
    addBosToken: z.boolean(),
    chatTemplate: z.string().min(1),
    /**
     * How the model writes tool calls, for tool_choice "auto" (none: "auto" with tools is refused).
     */
    toolCallParser: z.enum(toolCallParsers).optional(),
  }),
  training: TrainingSchema.optional(),
  evaluation: z.object({}).loose().optional(),
});

/** The three graphs of a latent diffusion pipeline (CONTRACTS2.md "the diffusion pipeline"). */
export const DIFFUSION_GRAPHS = ["text_encoder", "unet", "vae_decoder"] as const;

const TimestepSpacingSchema = z.enum(["leading", "trailing", "linspace"]);

const TextToImageManifestSchema = z.object({
  task: z.literal("text-to-image"),
  /**
   * A byte-level BPE; prompts are encoded without special tokens (lower-cased first when
   * `lowercase`).
   */
  tokenizer: z
    .object({
      file: z.string().min(1),
      sha256: Sha256Schema,
      bytes: z.number().int().positive(),
      config: z.string().optional(),
      lowercase: z.boolean().optional(),
    })
    .loose(),
  diffusion: z.object({
    promptLength: z.number().int().positive(),
    padTokenId: z.number().int().min(0),
    latentShape: z.tuple([
      z.number().int().positive(),
      z.number().int().positive(),
      z.number().int().positive(),
    ]),
    imageShape: z.tuple([z.literal(1), z.number().int().positive(), z.number().int().positive()]),
    scalingFactor: z.number().positive(),
    scheduler: z
      .object({
        numTrainTimesteps: z.number().int().positive(),
        betaSchedule: z.enum(["linear", "scaled_linear", "squaredcos_cap_v2"]),
        betaStart: z.number().positive(),
        betaEnd: z.number().positive(),
        predictionType: z.literal("epsilon"),
        timestepSpacing: TimestepSpacingSchema.optional(),
        stepsOffset: z.number().int().min(0).optional(),
        clipSample: z.boolean().optional(),
        setAlphaToOne: z.boolean().optional(),
      })
      .loose(),
    defaults: z.object({
      steps: z.number().int().positive(),
      guidanceScale: z.number().min(0),
      scheduler: z.enum(["ddim", "euler"]),
    }),
    /**
     * Latent → pixel: pixel ≈ bias + Σ_c factors[c] · x̂_0[c] (least squares on training latents).
     */
    preview: z.object({ factors: z.array(z.number()).min(1), bias: z.number() }),
  }),
  training: TrainingSchema.optional(),
  evaluation: z.object({}).loose().optional(),
});

export const TextClassificationSchema = BaseManifestSchema.extend(
  TextClassificationManifestSchema.shape,
);
export const FraudScoringSchema = BaseManifestSchema.extend(FraudScoringManifestSchema.shape);
export const ImageClassificationSchema = BaseManifestSchema.extend(
  ImageClassificationManifestSchema.shape,
);
export const RawSchema = BaseManifestSchema.extend(RawManifestSchema.shape);
export const TextGenerationSchema = BaseManifestSchema.extend(
  TextGenerationManifestSchema.shape,
).loose();
export const TextToImageSchema = BaseManifestSchema.extend(TextToImageManifestSchema.shape).loose();
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
export type TextClassificationManifest = z.infer<typeof TextClassificationSchema>;
export type FraudScoringManifest = z.infer<typeof FraudScoringSchema>;
export type ImageClassificationManifest = z.infer<typeof ImageClassificationSchema>;
export type FraudFeatures = FraudScoringManifest["features"];
export type TextGenerationManifest = z.infer<typeof TextGenerationSchema>;
export type TextToImageManifest = z.infer<typeof TextToImageSchema>;
