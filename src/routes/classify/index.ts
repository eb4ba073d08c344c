// POST /v1/classify: texts for a text classifier; images for an image classifier — as base64
// data URLs in JSON (`input` or `image`), a multipart file part (`file` or `image`, with a
// `model` field), or the raw PNG/JPEG body (`?model=`). The model's task picks the reading.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ServiceError } from "../../errors/service-error";
import { capability, type ServedModel } from "../../tasks";
import type { TextClassifier } from "../../tasks/text-classification";
import { IMAGE_MEDIA_TYPES, mediaEssence } from "./image-input";
import {
  asList,
  formImageRequest,
  type ImageRequest,
  jsonImages,
  rawImageRequest,
  readForm,
} from "./image-request";
import {
  ClassifyForm,
  ClassifyQuery,
  ClassifyRequest,
  ImageClassifyResponse,
  MAX_TEXT_CHARS,
  TextClassifyResponse,
} from "./schemas";
import { serverTiming } from "../http/server-timing";
import { BODY_ERRORS, MODEL_ERRORS, problemResponses, KEY_ERRORS } from "../http/problems";
import type { AppEnv } from "../http/services";
import { findModel, requireReady } from "../../tasks/model-lookup";
import { parseBody, readJson, validationHook } from "../http/validation";
import { requireScope } from "../http/auth";
import { limitBody, requireMediaType } from "../http/body";

// The bodies are documented by reference (the schemas are registered below), not as zod
// content: zod-openapi would then parse a body of every type as JSON. The handler reads
// each body itself, by its Content-Type (one parse, types that do not mix the shapes).
const binaryImage = { schema: { type: "string" as const, format: "binary" } };
const formBody = { schema: { $ref: "#/components/schemas/ClassifyForm" } };
const jsonBody = { schema: { $ref: "#/components/schemas/ClassifyRequest" } };

const classifyRoute = createRoute({
  method: "post",
  path: "/",
  operationId: "classify",
  summary:
    "Classify texts (text model) or images (image model: JSON data URLs, multipart, or a raw " +
    "PNG/JPEG body with ?model=)",
  request: {
    query: ClassifyQuery,
    body: {
      required: true,
      content: {
        "application/json": jsonBody,
        "multipart/form-data": formBody,
        "image/png": binaryImage,
        "image/jpeg": binaryImage,
      },
    },
  },
  responses: {
    200: {
      description: "Labels with softmax scores, best first, per text or image",
      content: {
        "application/json": { schema: z.union([TextClassifyResponse, ImageClassifyResponse]) },
      },
    },
    ...problemResponses("openai", KEY_ERRORS, BODY_ERRORS, MODEL_ERRORS),
  },
});

function classifierOf(model: ServedModel, field: string): TextClassifier {
  return capability(model, "textClassification", field);
}

function checkBatch(count: number, maxBatch: number, field: string): void {
  if (count > maxBatch)
    throw new ServiceError(
      422,
      "unprocessable_input",
      `At most ${maxBatch} inputs per request, got ${count}`,
      { field },
    );
}

export const classifyRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
classifyRoutes.use(requireScope("classify"));
// Texts as JSON; images as raw PNG/JPEG bodies, multipart forms or data URLs in JSON.
classifyRoutes.on(
  "POST",
  "/",
  requireMediaType(["application/json", "multipart/form-data", ...IMAGE_MEDIA_TYPES]),
  limitBody,
);
classifyRoutes.openAPIRegistry.register("ClassifyRequest", ClassifyRequest);
classifyRoutes.openAPIRegistry.register("ClassifyForm", ClassifyForm);
classifyRoutes.openapi(classifyRoute, async (c) => {
  const type = mediaEssence(c.req.header("content-type") ?? "");
  const services = c.get("services");
  const maxBatch = Number(c.env.MAX_BATCH);
  let imageRequest: ImageRequest | undefined;
  if ((IMAGE_MEDIA_TYPES as readonly string[]).includes(type))
    imageRequest = await rawImageRequest(c.req.raw, c.req.valid("query"));
  else if (type === "multipart/form-data")
    imageRequest = await formImageRequest(await readForm(c.req.raw));
  else {
    const body = parseBody(ClassifyRequest, await readJson(c.req.raw));
    const model = findModel(services, body.model, "model");
    if (model.capabilities.imageClassification !== undefined || body.image !== undefined) {
      checkBatch(
        asList(body.image ?? body.input ?? []).length,
        maxBatch,
        body.image !== undefined ? "image" : "input",
      );
      imageRequest = {
        model: body.model,
        modelField: "model",
        topK: body.top_k,
        ...jsonImages(body),
      };
    } else {
      return classifyTexts(c, model, body);
    }
  }
  const model = findModel(services, imageRequest.model, imageRequest.modelField);
  const classifier = capability(model, "imageClassification", imageRequest.modelField);
  checkBatch(imageRequest.images.length, maxBatch, imageRequest.fieldOf(0));
  await requireReady(model);
  const { results, timings } = await classifier.classify(
    imageRequest.images,
    imageRequest.topK ?? classifier.manifest.labels.length,
    imageRequest.fieldOf,
    c.req.raw.signal,
  );
  c.header("server-timing", serverTiming(timings));
  return c.json(
    { model: classifier.manifest.name, model_version: classifier.manifest.version, results },
    200,
  );
});

type ClassifyBody = z.infer<typeof ClassifyRequest>;

async function classifyTexts(c: Context<AppEnv>, model: ServedModel, body: ClassifyBody) {
  const classifier = classifierOf(model, "model");
  if (body.input === undefined)
    throw new ServiceError(400, "invalid_request", "input: Required", { field: "input" });
  const texts = asList(body.input);
  const fieldOf = (index: number) => (typeof body.input === "string" ? "input" : `input.${index}`);
  const tooLong = texts.findIndex((text) => text.length > MAX_TEXT_CHARS);
  if (tooLong !== -1) {
    throw new ServiceError(
      400,
      "invalid_request",
      `${fieldOf(tooLong)}: at most ${MAX_TEXT_CHARS} characters`,
      { field: fieldOf(tooLong) },
    );
  }
  checkBatch(texts.length, Number(c.env.MAX_BATCH), "input");
  await requireReady(model);
  const { results, timings } = await classifier.classify(
    texts,
    body.top_k ?? classifier.manifest.labels.length,
    fieldOf,
    c.req.raw.signal,
  );
  c.header("server-timing", serverTiming(timings));
  return c.json(
    {
      model: classifier.manifest.name,
      model_version: classifier.manifest.version,
      results,
      usage: { prompt_tokens: results.reduce((sum, result) => sum + result.tokens, 0) },
    },
    200,
  );
}
