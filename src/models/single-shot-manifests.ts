// The manifests of the single-shot tasks: text and image classification, fraud scoring, and raw
// tensors in and out.
import { z } from "zod";
import { BaseManifestSchema, Sha256Schema, TrainingSchema } from "./manifest-base";

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

/**
 * Tensors in, tensors out: served over the Open Inference Protocol only (e.g. third-party graphs).
 */
const RawManifestSchema = z.object({ task: z.literal("raw") });

export const TextClassificationSchema = BaseManifestSchema.extend(
  TextClassificationManifestSchema.shape,
);
export const FraudScoringSchema = BaseManifestSchema.extend(FraudScoringManifestSchema.shape);
export const ImageClassificationSchema = BaseManifestSchema.extend(
  ImageClassificationManifestSchema.shape,
);
export const RawSchema = BaseManifestSchema.extend(RawManifestSchema.shape);

export type TextClassificationManifest = z.infer<typeof TextClassificationSchema>;
export type FraudScoringManifest = z.infer<typeof FraudScoringSchema>;
export type ImageClassificationManifest = z.infer<typeof ImageClassificationSchema>;
export type FraudFeatures = FraudScoringManifest["features"];
