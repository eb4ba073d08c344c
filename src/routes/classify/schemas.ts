// The zod schemas of POST /v1/classify: the JSON body, the multipart form, the query of a raw
// image body, and the text and image answers.
import { z } from "@hono/zod-openapi";
import { DataUrl, ImageFile } from "./image-input";

/** Longest text accepted; the model reads only its tokenizer's maxChars of it anyway. */
export const MAX_TEXT_CHARS = 100_000;

export const Text = z
  .string()
  .min(1, "must not be empty")
  .max(MAX_TEXT_CHARS, `at most ${MAX_TEXT_CHARS} characters`);
/** A text, or (for an image model) a data URL; texts are held to MAX_TEXT_CHARS by the handler. */
const Input = DataUrl.openapi({
  description:
    `A text (at most ${MAX_TEXT_CHARS} characters) or, for an image model, a ` +
    "data:image/png;base64,… or data:image/jpeg;base64,… URL",
});
const TopK = z.number().int().min(1).max(100);

export const LabelScoreSchema = z
  .object({ label: z.string(), score: z.number() })
  .openapi("LabelScore");

export const ClassifyRequest = z
  .object({
    model: z.string().min(1).openapi({ example: "spam-classifier" }),
    input: z
      .union([Input, z.array(Input).min(1, "needs at least one input")])
      .optional()
      .openapi({
        example: "Congratulations! You have won a free cruise. Reply now to claim.",
      }),
    image: z
      .union([DataUrl, z.array(DataUrl).min(1, "needs at least one image")])
      .optional()
      .openapi({
        description: "Image model only: the same as `input` (data URLs); send one of the two",
      }),
    top_k: TopK.optional().openapi({ description: "Labels per input; default: all" }),
  })
  .strict()
  .openapi("ClassifyRequest");

/** The multipart form (read by the handler: documented through the registry, see below). */
export const ClassifyForm = z
  .object({
    model: z.string().min(1).openapi({ example: "digit-classifier" }),
    file: ImageFile.optional(),
    image: ImageFile.optional().openapi({
      type: "string",
      format: "binary",
      description: "The same as `file`; send one of the two",
    }),
    top_k: z.coerce
      .number()
      .pipe(TopK)
      .optional()
      .openapi({ type: "integer", description: "Labels per image; default: all" }),
  })
  .strict()
  .openapi("ClassifyForm");

export const ClassifyQuery = z.object({
  model: z
    .string()
    .min(1)
    .optional()
    .openapi({
      description:
        "The model, for a raw image body (image/png, image/jpeg); JSON and multipart bodies name " +
        "it inside",
    }),
  top_k: z.coerce
    .number()
    .pipe(TopK)
    .optional()
    .openapi({ type: "integer", description: "Labels per image, for a raw image body" }),
});

export const TextClassifyResponse = z
  .object({
    model: z.string(),
    model_version: z.string(),
    results: z.array(
      z.object({
        labels: z.array(LabelScoreSchema),
        tokens: z.number().int(),
        truncated: z.boolean(),
      }),
    ),
    usage: z.object({ prompt_tokens: z.number().int() }),
  })
  .openapi("ClassifyResponse");

export const ImageClassifyResponse = z
  .object({
    model: z.string(),
    model_version: z.string(),
    results: z.array(
      z.object({
        labels: z.array(LabelScoreSchema),
        image: z
          .object({
            format: z.enum(["png", "jpeg"]),
            width: z.number().int(),
            height: z.number().int(),
          })
          .openapi({ description: "The decoded image" }),
      }),
    ),
  })
  .openapi("ImageClassifyResponse");
