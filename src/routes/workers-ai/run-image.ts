// The Workers AI text-to-image shape on POST /v1/run/{model}: {prompt, num_steps, guidance, seed,
// height, width} → the PNG itself, as Workers AI's Stable Diffusion models answer.
import { ServiceError } from "../../errors/service-error";
import { capability, type ServedModel } from "../../tasks";
import { emptyTimings } from "../../tasks/text-to-image/text-to-image";
import { serverTiming } from "../http/server-timing";
import { requireReady } from "../../tasks/model-lookup";
import { parseBody } from "../http/validation";
import { collectImages, startImages } from "../openai/images/image-stream";
import { imageOptions } from "../openai/images/options";
import { TextToImageRunInput } from "../openai/images/request-schema";

export async function runTextToImage(
  model: ServedModel,
  raw: unknown,
  signal: AbortSignal,
): Promise<Response> {
  const generator = capability(model, "textToImage", "model");
  const body = parseBody(TextToImageRunInput, raw);
  const side = body.width ?? body.height;
  if (body.width !== undefined && body.height !== undefined && body.width !== body.height) {
    throw new ServiceError(
      400,
      "invalid_request",
      "height and width must be equal (square images)",
      { field: "height" },
    );
  }
  const options = imageOptions(
    generator,
    {
      size: side === undefined ? undefined : `${side}x${side}`,
      steps: body.num_steps,
      guidanceScale: body.guidance,
      scheduler: body.scheduler,
      seed: body.seed,
    },
    body.width === undefined ? "height" : "width",
  );
  await requireReady(model);
  const timings = emptyTimings();
  const ids = await generator.prepare(body.prompt);
  const [png] = await collectImages(await startImages(generator, ids, options, signal, timings));
  if (png === undefined)
    throw new ServiceError(502, "upstream_error", "The diffusion loop returned no image");
  return new Response(png, {
    status: 200,
    headers: { "content-type": "image/png", "server-timing": serverTiming({ ...timings }) },
  });
}
