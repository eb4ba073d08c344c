// The manifests of the generative tasks: text generation (its decoder, chat template and
// tool-call format) and text to image (its diffusion pipeline).
import { z } from "zod";
import { BaseManifestSchema, Sha256Schema, TrainingSchema } from "./manifest-base";

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

export const TextGenerationSchema = BaseManifestSchema.extend(
  TextGenerationManifestSchema.shape,
).loose();
export const TextToImageSchema = BaseManifestSchema.extend(TextToImageManifestSchema.shape).loose();

export type TextGenerationManifest = z.infer<typeof TextGenerationSchema>;
export type TextToImageManifest = z.infer<typeof TextToImageSchema>;
