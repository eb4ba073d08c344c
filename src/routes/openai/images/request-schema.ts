// The OpenAI Images request as this service takes it: OpenAI's fields at the values that mean
// something here, plus the diffusion loop's own knobs; anything else is a 400 naming the field.
import { z } from "@hono/zod-openapi";

export const IMAGE_SIZES = ["28x28", "56x56", "112x112", "224x224"] as const;

/**
 * Sizes are whole multiples of the model's 28 × 28; b64_json only (the edge stores nothing to serve
 * a `url` from); PNG only; plus the diffusion loop's steps, guidance_scale, scheduler and seed.
 */
export const ImageGenerationRequest = z
  .object({
    prompt: z.string().min(1).max(1000).openapi({ example: "a handwritten seven" }),
    model: z.string().min(1).nullish().openapi({
      description: "Default: the service's text-to-image model",
      example: "digit-diffusion",
    }),
    n: z
      .number()
      .int()
      .min(1)
      .max(4)
      .nullish()
      .openapi({ description: "Images to generate (1–4); image i uses seed + i" }),
    size: z
      .enum(["auto", ...IMAGE_SIZES])
      .nullish()
      .openapi({
        description:
          'Whole multiples of the model\'s 28 × 28 (nearest-neighbour upscale); "auto" = 28x28',
      }),
    response_format: z
      .enum(["b64_json"], {
        error: "only b64_json is supported: the service keeps no images to serve a url from",
      })
      .nullish(),
    output_format: z.enum(["png"], { error: "only png is supported" }).nullish(),
    stream: z
      .boolean()
      .nullish()
      .openapi({
        description:
          "SSE: image_generation.partial_image events, then " +
          "image_generation.completed per image, then [DONE]",
      }),
    partial_images: z
      .number()
      .int()
      .min(0)
      .max(3)
      .nullish()
      .openapi({
        description:
          "Previews per image when streaming (0–3), drawn " +
          "at the edge from the predicted clean latents",
      }),
    steps: z
      .number()
      .int()
      .min(1)
      .max(200)
      .nullish()
      .openapi({ description: "Denoising steps (default: the model's)" }),
    guidance_scale: z
      .number()
      .min(0)
      .max(20)
      .nullish()
      .openapi({ description: "Classifier-free guidance scale (default: the model's)" }),
    scheduler: z
      .enum(["ddim", "euler"])
      .nullish()
      .openapi({ description: "DDIM (eta 0) or Euler discrete (default: the model's)" }),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .nullish()
      .openapi({
        description: "Same seed and parameters → the same PNG bytes; random when absent",
      }),
    quality: z.enum(["auto"]).nullish().openapi({ description: 'Accepted only as "auto"' }),
    background: z
      .enum(["auto", "opaque"])
      .nullish()
      .openapi({ description: "Images are opaque grayscale" }),
    moderation: z.enum(["auto", "low"]).nullish(),
    user: z.string().max(256).nullish(),
  })
  .strict()
  .openapi("ImageGenerationRequest");
export type ImageGenerationRequest = z.infer<typeof ImageGenerationRequest>;

const Usage = z.object({
  input_tokens: z.number().int(),
  input_tokens_details: z.object({ text_tokens: z.number().int(), image_tokens: z.number().int() }),
  output_tokens: z.number().int(),
  total_tokens: z.number().int(),
});

export const ImagesResponse = z
  .object({
    created: z.number().int(),
    data: z.array(z.object({ b64_json: z.string() })),
    output_format: z.literal("png"),
    size: z.string(),
    background: z.literal("opaque"),
    usage: Usage,
  })
  .openapi("ImagesResponse");

/** The Workers AI text-to-image input (its Stable Diffusion models' names), for /v1/run/{model}. */
export const TextToImageRunInput = z
  .object({
    prompt: z.string().min(1).max(1000),
    num_steps: z.number().int().min(1).max(200).optional(),
    guidance: z.number().min(0).max(20).optional(),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .optional(),
    height: z.number().int().min(1).optional(),
    width: z.number().int().min(1).optional(),
    scheduler: z.enum(["ddim", "euler"]).optional(),
  })
  .strict()
  .openapi("TextToImageInput");
