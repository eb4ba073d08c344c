// POST /v1/run/{model}: the Workers AI binding's shapes (its output, not the REST envelope) for
// text and image classification and text generation; the model's capabilities pick the shape.
import { createRoute, OpenAPIHono, z, type Hook } from "@hono/zod-openapi";
import { capability } from "../../tasks";
import { BODY_ERRORS, MODEL_ERRORS, problemResponses, KEY_ERRORS } from "../http/problems";
import { TextToImageRunInput } from "../openai/images/request-schema";
import { runGeneration } from "./run-generation";
import { runTextToImage } from "./run-image";
import {
  ClassificationInput,
  GenerationInput,
  ImageClassificationInput,
  RunOutput,
} from "./schemas";
import { serverTiming } from "../http/server-timing";
import type { AppEnv } from "../http/services";
import { findModel, requireReady } from "../../tasks/model-lookup";
import { parseBody, validationHook } from "../http/validation";
import { requireScopeBy } from "../http/auth";
import { limitBody, requireJson } from "../http/body";

const runRoute = createRoute({
  method: "post",
  path: "/{model}",
  operationId: "runModel",
  summary:
    "Workers AI-style: text classification ({text} → [{label, score}]), image classification " +
    "({image: [bytes]} → [{label, score}]), text generation ({prompt | messages} → {response}) " +
    "or text-to-image ({prompt, num_steps, guidance, seed, height, width} → image/png)",
  request: {
    params: z.object({ model: z.string().min(1) }),
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z.union([
            ClassificationInput,
            ImageClassificationInput,
            GenerationInput,
            TextToImageRunInput,
          ]),
        },
      },
    },
  },
  responses: {
    200: {
      description:
        "Classification: every label with its score, best first. Generation: {response, " +
        'usage}, or SSE `data: {"response": …}` then `data: [DONE]`',
      content: {
        "application/json": { schema: RunOutput },
        "text/event-stream": { schema: z.string() },
        "image/png": {
          schema: z.string().openapi({ format: "binary", description: "Text-to-image: the PNG" }),
        },
      },
    },
    ...problemResponses("openai", KEY_ERRORS, BODY_ERRORS, MODEL_ERRORS),
  },
});

/**
 * A body the route's union refuses is described by the one schema meant for it: {text} or
 * {image} by their keys, otherwise the model's task. zod 4's union answers with the branch that
 * got furthest, so a generation body with `stream: "yes"` read "stream: Unrecognized key" (from
 * the text-to-image branch) instead of "expected boolean".
 */
const runBodyHook: Hook<unknown, AppEnv, string, unknown> = (result, c) => {
  if (!result.success && result.target === "json") {
    const body: unknown = "data" in result ? result.data : undefined;
    const object = typeof body === "object" && body !== null && !Array.isArray(body);
    const model = c.get("services").get(c.req.param("model") ?? "");
    const textToImage = model?.capabilities.textToImage !== undefined;
    parseBody(
      object && "text" in body
        ? ClassificationInput
        : object && "image" in body
          ? ImageClassificationInput
          : textToImage
            ? TextToImageRunInput
            : GenerationInput,
      body,
    );
  }
  return validationHook(result, c);
};

/**
 * Text classification: {text} → [{label, score}]. Image classification: {image: [bytes 0–255]} (the
 * PNG or JPEG file's bytes) → [{label, score}], as @cf/microsoft/resnet-50 takes it. Text
 * generation: {prompt | messages, raw, stream, max_tokens, temperature, top_p, top_k, seed, the
 * three penalties, tools, tool_choice} → {response, tool_calls?} or SSE `data: {"response": "…"}` …
 * `data: [DONE]`.
 */
export const runRoutes = new OpenAPIHono<AppEnv>({ defaultHook: runBodyHook });
runRoutes.use(
  "/:model",
  requireScopeBy((c) => {
    // Generation (text or images) needs `generate`; classification, `classify`. An unknown model
    // needs `classify` (its 404 says no more than /v1/models).
    const model = c.get("services").get(c.req.param("model") ?? "");
    const generates =
      model?.capabilities.textGeneration !== undefined ||
      model?.capabilities.textToImage !== undefined;
    return generates ? "generate" : "classify";
  }),
);
runRoutes.on("POST", "*", requireJson, limitBody);
runRoutes.openapi(runRoute, async (c) => {
  const { model: name } = c.req.valid("param");
  const valid = c.req.valid("json");
  const model = findModel(c.get("services"), name, "model");
  if (model.capabilities.textToImage !== undefined)
    return runTextToImage(model, valid, c.req.raw.signal);
  // A text-to-image body sent to a text model: its fields are named in the 400.
  const body = "text" in valid || "image" in valid ? valid : parseBody(GenerationInput, valid);
  if ("text" in body) {
    const classifier = capability(model, "textClassification", "model");
    await requireReady(model);
    const { results, timings } = await classifier.classify(
      [body.text],
      classifier.manifest.labels.length,
      () => "text",
      c.req.raw.signal,
    );
    c.header("server-timing", serverTiming(timings));
    return c.json(results[0]?.labels ?? [], 200);
  }
  if ("image" in body) {
    const classifier = capability(model, "imageClassification", "model");
    await requireReady(model);
    const image = { bytes: Uint8Array.from(body.image), declaredImage: false };
    const { results, timings } = await classifier.classify(
      [image],
      classifier.manifest.labels.length,
      () => "image",
      c.req.raw.signal,
    );
    c.header("server-timing", serverTiming(timings));
    return c.json(results[0]?.labels ?? [], 200);
  }
  return runGeneration(c, model, body);
});
