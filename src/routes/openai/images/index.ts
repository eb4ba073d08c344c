// OpenAI Images: POST /v1/images/generations — b64_json PNGs, or with `stream: true` SSE
// partial-image previews and completed images.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { ServiceError } from "../../../errors/service-error";
import { capability, type ServedModel, type Services } from "../../../tasks";
import type { ImageGenerator } from "../../../tasks/text-to-image/text-to-image";
import { BODY_ERRORS, MODEL_ERRORS, problemResponses, KEY_ERRORS } from "../../http/problems";
import type { AppEnv } from "../../http/services";
import { findModel, requireReady } from "../../../tasks/model-lookup";
import { validationHook } from "../../http/validation";
import { requireScope } from "../../http/auth";
import { limitBody, requireJson } from "../../http/body";
import { collectImages, imageStreamResponse, startImages, toBase64 } from "./image-stream";
import { imageOptions } from "./options";
import { ImageGenerationRequest, ImagesResponse } from "./request-schema";

const route = createRoute({
  method: "post",
  path: "/generations",
  operationId: "createImage",
  summary: "OpenAI-compatible text-to-image (streamed previews with stream: true)",
  request: {
    body: { required: true, content: { "application/json": { schema: ImageGenerationRequest } } },
  },
  responses: {
    200: {
      description:
        "The images as base64 PNGs, or SSE events: " +
        "`image_generation.partial_image` (previews), `image_generation.completed` " +
        "(one per image; the last ends the stream, no `data: [DONE]`)",
      content: {
        "application/json": { schema: ImagesResponse },
        "text/event-stream": {
          schema: z.string().openapi({
            description:
              "`event: <type>` + `data: {event}` frames; a failure after " +
              "the first byte is the last one, `event: error` with `data: " +
              '{"type": "error", "error": {message, type, code, param}}`',
          }),
        },
      },
    },
    ...problemResponses("openai", KEY_ERRORS, BODY_ERRORS, MODEL_ERRORS),
  },
});

/** The named model, or the service's only text-to-image model when none is named. */
function imageModel(services: Services, name: string | null | undefined): ServedModel {
  if (name !== undefined && name !== null) return findModel(services, name, "model");
  const found = services.list().find((model) => model.capabilities.textToImage !== undefined);
  if (found === undefined)
    throw new ServiceError(404, "model_not_found", "This service has no text-to-image model", {
      field: "model",
    });
  return found;
}

const usage = (promptTokens: number) => ({
  input_tokens: promptTokens,
  input_tokens_details: { text_tokens: promptTokens, image_tokens: 0 },
  output_tokens: 0,
  total_tokens: promptTokens,
});

const promptTokens = (ids: BigInt64Array, pad: number) =>
  ids.filter((id) => id !== BigInt(pad)).length;

export const imageRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
imageRoutes.use(requireScope("generate"));
imageRoutes.on("POST", "*", requireJson, limitBody);
imageRoutes.openapi(route, async (c) => {
  const body = c.req.valid("json");
  const model = imageModel(c.get("services"), body.model);
  const generator: ImageGenerator = capability(model, "textToImage", "model");
  const options = imageOptions(generator, {
    n: body.n,
    size: body.size,
    steps: body.steps,
    guidanceScale: body.guidance_scale,
    scheduler: body.scheduler,
    seed: body.seed,
    partialImages: body.stream === true ? body.partial_images : 0,
  });
  await requireReady(model);
  const ids = await generator.prepare(body.prompt);
  const started = await startImages(generator, ids, options, c.req.raw.signal);
  const created = Math.floor(Date.now() / 1000);
  const size = `${options.size}x${options.size}`;
  const common = { background: "opaque", output_format: "png", quality: "auto", size } as const;
  const tokens = promptTokens(ids, generator.manifest.diffusion.padTokenId);
  if (body.stream === true) {
    return imageStreamResponse(started, {
      partial: (event) => ({
        type: "image_generation.partial_image",
        b64_json: toBase64(event.png),
        created_at: created,
        partial_image_index: event.partialIndex,
        ...common,
      }),
      completed: (event) => ({
        type: "image_generation.completed",
        b64_json: toBase64(event.png),
        created_at: created,
        ...common,
        usage: usage(tokens),
      }),
    });
  }
  const images = await collectImages(started);
  return c.json(
    {
      created,
      data: images.map((png) => ({ b64_json: toBase64(png) })),
      output_format: "png" as const,
      size,
      background: "opaque" as const,
      usage: usage(tokens),
    },
    200,
  );
});
