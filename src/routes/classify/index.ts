// POST /v1/classify: texts for a text classifier; images for an image classifier — as base64
// data URLs in JSON (`input` or `image`), a multipart file part (`file` or `image`, with a
// `model` field), or the raw PNG/JPEG body (`?model=`). The model's task picks the reading.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ServiceError } from "../../errors/service-error";
import { capability, type ServedModel } from "../../tasks";
import type { EncodedImage } from "../../tasks/image-classification";
import type { TextClassifier } from "../../tasks/text-classification";
import {
  DataUrl,
  dataUrlBytes,
  fileBytes,
  ImageFile,
  IMAGE_MEDIA_TYPES,
  mediaEssence,
} from "./image-input";
import { serverTiming } from "../http/server-timing";
import { BODY_ERRORS, MODEL_ERRORS, problemResponses } from "../http/problems";
import type { AppEnv } from "../http/services";
import { findModel, requireReady } from "../../tasks/model-lookup";
import { parseBody, readJson, validationHook } from "../http/validation";
import { requireApiKey } from "../http/auth";
import { limitBody, requireMediaType } from "../http/body";

/** Longest text accepted; the model reads only its tokenizer's maxChars of it anyway. */
const MAX_TEXT_CHARS = 100_000;

const Text = z
  .string()
  .min(1, "must not be empty")
  .max(MAX_TEXT_CHARS, `at most ${MAX_TEXT_CHARS} characters`);
/** A text, or (for an image model) a data URL; texts are held to MAX_TEXT_CHARS by the handler. */
const Input = DataUrl.openapi({
  description: `A text (at most ${MAX_TEXT_CHARS} characters) or, for an image model, a data:image/png;base64,… or data:image/jpeg;base64,… URL`,
});
const TopK = z.number().int().min(1).max(100);

export const LabelScoreSchema = z
  .object({ label: z.string(), score: z.number() })
  .openapi("LabelScore");

const ClassifyRequest = z
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

const ClassifyQuery = z.object({
  model: z.string().min(1).optional().openapi({
    description:
      "The model, for a raw image body (image/png, image/jpeg); JSON and multipart bodies name it inside",
  }),
  top_k: z.coerce
    .number()
    .pipe(TopK)
    .optional()
    .openapi({ type: "integer", description: "Labels per image, for a raw image body" }),
});

const TextClassifyResponse = z
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

const ImageClassifyResponse = z
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
    "Classify texts (text model) or images (image model: JSON data URLs, multipart, or a raw PNG/JPEG body with ?model=)",
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
    ...problemResponses("openai", 401, BODY_ERRORS, MODEL_ERRORS),
  },
});

function classifierOf(model: ServedModel, field: string): TextClassifier {
  return capability(model, "textClassification", field);
}

export { classifierOf, Text };

function asList(value: string | string[]): string[] {
  return Array.isArray(value) ? value : [value];
}

/** Images to classify and the names of their fields, from whichever body the request sent. */
interface ImageRequest {
  model: string;
  modelField: string;
  topK: number | undefined;
  images: EncodedImage[];
  fieldOf: (index: number) => string;
}

async function rawImageRequest(
  request: Request,
  query: z.infer<typeof ClassifyQuery>,
): Promise<ImageRequest> {
  if (query.model === undefined) {
    throw new ServiceError(
      400,
      "invalid_request",
      "model: a raw image body names its model in the query (?model=…)",
      { field: "model" },
    );
  }
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.length === 0)
    throw new ServiceError(400, "invalid_request", "body: the image body is empty", {
      field: "body",
    });
  return {
    model: query.model,
    modelField: "model",
    topK: query.top_k,
    images: [{ bytes, declaredImage: true }],
    fieldOf: () => "body",
  };
}

async function readForm(request: Request): Promise<z.infer<typeof ClassifyForm>> {
  let form: FormData;
  try {
    form = await request.formData();
  } catch (error) {
    throw new ServiceError(400, "invalid_request", "body: not a valid multipart/form-data body", {
      field: "body",
      cause: error,
    });
  }
  const fields: Record<string, File | string> = {};
  for (const [name, value] of form.entries()) {
    if (name in fields)
      throw new ServiceError(400, "invalid_request", `${name}: sent more than once`, {
        field: name,
      });
    fields[name] = value;
  }
  return parseBody(ClassifyForm, fields);
}

async function formImageRequest(form: z.infer<typeof ClassifyForm>): Promise<ImageRequest> {
  const field = form.file !== undefined ? "file" : "image";
  const file = form.file ?? form.image;
  if (file === undefined || (form.file !== undefined && form.image !== undefined)) {
    throw new ServiceError(
      400,
      "invalid_request",
      "file: send the image as exactly one file part named file (or image)",
      { field: "file" },
    );
  }
  const bytes = await fileBytes(file, field);
  return {
    model: form.model,
    modelField: "model",
    topK: form.top_k,
    images: [{ bytes, declaredImage: mediaEssence(file.type).startsWith("image/") }],
    fieldOf: () => field,
  };
}

function jsonImages(body: z.infer<typeof ClassifyRequest>): {
  images: EncodedImage[];
  fieldOf: (index: number) => string;
} {
  const field = body.image !== undefined ? "image" : "input";
  const value = body.image ?? body.input;
  if (value === undefined || (body.image !== undefined && body.input !== undefined)) {
    throw new ServiceError(
      400,
      "invalid_request",
      "input: send the images as input (or image), one of the two",
      { field: "input" },
    );
  }
  const fieldOf = (index: number) => (Array.isArray(value) ? `${field}.${index}` : field);
  return {
    images: asList(value).map((url, i) => ({
      bytes: dataUrlBytes(url, fieldOf(i)),
      declaredImage: true,
    })),
    fieldOf,
  };
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
classifyRoutes.use(requireApiKey);
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
