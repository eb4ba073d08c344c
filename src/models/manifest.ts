// The model manifest: the single source of truth for what a model is, where it runs,
// how its inputs are prepared and how well it did on held-out data.
import { z } from "zod";
import { TensorSpecSchema } from "../runtime/tensor";

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

const TextClassificationManifestSchema = z.object({
  task: z.literal("text-classification"),
  labels: z.array(z.string().min(1)).min(2),
  tokenizer: TokenizerSchema,
});

const BaseManifestSchema = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, "lowercase name: letters, digits, . _ -"),
  version: z.string().min(1),
  description: z.string(),
  /** Where the graph runs; "origin" (GPU server) arrives with the origin adapter. */
  runtime: z.literal("wasm"),
  file: z.string().min(1),
  sha256: Sha256Schema,
  bytes: z.number().int().positive(),
  inputs: z.array(TensorSpecSchema).min(1),
  outputs: z.array(TensorSpecSchema).min(1),
  reference: z.object({ file: z.string(), sha256: Sha256Schema, bytes: z.number().int().positive() }).optional(),
  evaluation: z.object({
    dataset: z.string(),
    split: z.string(),
    examples: z.number().int().positive(),
    fp32: MetricsSchema,
    int8: MetricsSchema,
    agreement: z.number().min(0).max(1),
    sizeRatio: z.number().positive(),
  }),
  training: z.object({ script: z.string(), architecture: z.string() }).loose(),
});

export const ManifestSchema = z.discriminatedUnion("task", [
  BaseManifestSchema.extend(TextClassificationManifestSchema.shape),
]);

export type Manifest = z.infer<typeof ManifestSchema>;
export type TextClassificationManifest = Extract<Manifest, { task: "text-classification" }>;
