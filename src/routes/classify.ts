// POST /v1/classify: one text or a batch, top-k labels.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { ServiceError } from "../errors/service-error";
import { capability, type ServedModel } from "../tasks";
import type { TextClassifier } from "../tasks/text-classification";
import { serverTiming } from "./server-timing";
import { BODY_ERRORS, MODEL_ERRORS, problemResponses } from "./problems";
import { findModel, requireReady, type AppEnv } from "./services";
import { validationHook } from "./validation";

/** Longest text accepted; the model reads only its tokenizer's maxChars of it anyway. */
const MAX_TEXT_CHARS = 100_000;

const Text = z.string().min(1, "must not be empty").max(MAX_TEXT_CHARS, `at most ${MAX_TEXT_CHARS} characters`);

export const LabelScoreSchema = z.object({ label: z.string(), score: z.number() }).openapi("LabelScore");

const ClassifyRequest = z
  .object({
    model: z.string().min(1).openapi({ example: "spam-classifier" }),
    input: z.union([Text, z.array(Text).min(1, "needs at least one text")]).openapi({
      example: "Congratulations! You have won a free cruise. Reply now to claim.",
    }),
    top_k: z.number().int().min(1).max(100).optional().openapi({ description: "Labels per text; default: all" }),
  })
  .strict()
  .openapi("ClassifyRequest");

const ClassifyResponse = z
  .object({
    model: z.string(),
    model_version: z.string(),
    results: z.array(z.object({ labels: z.array(LabelScoreSchema), tokens: z.number().int(), truncated: z.boolean() })),
    usage: z.object({ prompt_tokens: z.number().int() }),
  })
  .openapi("ClassifyResponse");

const classifyRoute = createRoute({
  method: "post",
  path: "/v1/classify",
  operationId: "classify",
  summary: "Classify one text or a batch with a text-classification model",
  request: { body: { required: true, content: { "application/json": { schema: ClassifyRequest } } } },
  responses: {
    200: { description: "Labels with softmax scores, best first", content: { "application/json": { schema: ClassifyResponse } } },
    ...problemResponses("/v1/classify", 401, BODY_ERRORS, MODEL_ERRORS),
  },
});

function classifierOf(model: ServedModel, field: string): TextClassifier {
  return capability(model, "textClassification", field);
}

export { classifierOf, Text };

export const classifyRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(classifyRoute, async (c) => {
    const body = c.req.valid("json");
    const model = findModel(c.get("services"), body.model, "model");
    const classifier = classifierOf(model, "model");
    const texts = typeof body.input === "string" ? [body.input] : body.input;
    const maxBatch = Number(c.env.MAX_BATCH);
    if (texts.length > maxBatch) {
      throw new ServiceError(422, "unprocessable_input", `At most ${maxBatch} texts per request, got ${texts.length}`, { field: "input" });
    }
    await requireReady(model);
    const fieldOf = (index: number) => (typeof body.input === "string" ? "input" : `input.${index}`);
    const { results, timings } = await classifier.classify(texts, body.top_k ?? classifier.manifest.labels.length, fieldOf, c.req.raw.signal);
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
  });
