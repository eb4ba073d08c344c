// POST /tokenize and /detokenize (also under /v1/), in vLLM's shapes and paths: a prompt or chat
// messages → {tokens, count, max_model_len}; token ids → {prompt}.
import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import type { ServedModel } from "../../tasks";
import type { Tokenization } from "../../tasks/tokenization";
import type { LosslessJson, TemplateValue } from "../../tokenizers/chat-template";
import { isLosslessObject, losslessBody } from "../http/lossless-body";
import type { AppEnv } from "../http/services";
import { findModel } from "../../tasks/model-lookup";
import {
  DetokenizeRequest,
  DetokenizeResponse,
  TokenizeRequest,
  TokenizeResponse,
} from "./tokenize-schemas";
import { BODY_ERRORS, problemResponses, KEY_ERRORS } from "../http/problems";
import { validationHook } from "../http/validation";
import { requireScope } from "../http/auth";
import { limitBody, requireJson } from "../http/body";

// 400: invalid request, a template error, or messages for a model without a chat template; 422: a
// model without a tokenizer, or ids outside its vocabulary; 503: the tokenizer could not be loaded.
const errors = problemResponses("openai", KEY_ERRORS, BODY_ERRORS, 404, 422, 503);

const tokenizeRoute = (operationSuffix: string) =>
  createRoute({
    method: "post",
    path: "/tokenize",
    operationId: `tokenize${operationSuffix}`,
    summary:
      "Token ids of a prompt, or of chat messages rendered with the model's chat template (vLLM)",
    request: {
      body: { required: true, content: { "application/json": { schema: TokenizeRequest } } },
    },
    responses: {
      200: {
        description: "The ids, their count and the model's context length",
        content: { "application/json": { schema: TokenizeResponse } },
      },
      ...errors,
    },
  });

const detokenizeRoute = (operationSuffix: string) =>
  createRoute({
    method: "post",
    path: "/detokenize",
    operationId: `detokenize${operationSuffix}`,
    summary: "The text of token ids (vLLM); special tokens kept",
    request: {
      body: { required: true, content: { "application/json": { schema: DetokenizeRequest } } },
    },
    responses: {
      200: {
        description: "The decoded text",
        content: { "application/json": { schema: DetokenizeResponse } },
      },
      ...errors,
    },
  });

function tokenizationOf(model: ServedModel): Tokenization {
  if (model.tokenization === undefined) {
    throw new ServiceError(
      422,
      "unprocessable_input",
      `Model "${model.manifest.name}" has no tokenizer`,
      { field: "model" },
    );
  }
  return model.tokenization;
}

const templateRecord = (
  value: LosslessJson | undefined,
): Record<string, TemplateValue> | undefined => (isLosslessObject(value) ? value : undefined);

/**
 * vLLM serves these at the root and under /v1: the app mounts one instance at each, whose
 * operation ids take `operationSuffix` ("" and "V1").
 */
export function tokenizeRoutes(operationSuffix: string) {
  const routes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  for (const path of ["/tokenize", "/detokenize"])
    routes.use(path, requireScope("classify"), requireJson, limitBody);
  routes.openapi(tokenizeRoute(operationSuffix), async (c) => {
    const body = c.req.valid("json");
    const tokenization = tokenizationOf(findModel(c.get("services"), body.model, "model"));
    let tokens: number[];
    if ("prompt" in body) {
      tokens = await tokenization.tokenize(body.prompt, body.add_special_tokens);
    } else {
      const lossless = await losslessBody(c.req);
      tokens = await tokenization.tokenizeChat(
        {
          messages: Array.isArray(lossless.messages) ? lossless.messages : [],
          tools: Array.isArray(lossless.tools) ? lossless.tools : null,
          addGenerationPrompt: body.add_generation_prompt,
          kwargs: templateRecord(lossless.chat_template_kwargs),
        },
        body.add_special_tokens,
      );
    }
    return c.json({ count: tokens.length, max_model_len: tokenization.maxModelLen, tokens }, 200);
  });
  routes.openapi(detokenizeRoute(operationSuffix), async (c) => {
    const body = c.req.valid("json");
    const tokenization = tokenizationOf(findModel(c.get("services"), body.model, "model"));
    return c.json({ prompt: await tokenization.detokenize(body.tokens) }, 200);
  });
  return routes;
}
