// The OpenAPI declarations of POST /v1/chat/completions and POST /v1/completions: bodies, the
// JSON or SSE answer, the problems they may return.
import { createRoute, z } from "@hono/zod-openapi";
import { BODY_ERRORS, KEY_ERRORS, MODEL_ERRORS, problemResponses } from "../http/problems";
import { ChatCompletionRequest } from "./chat-request";
import { CompletionRequest } from "./completion-request";
import { ChatCompletionResponse, CompletionResponse } from "./responses";

const sse = {
  "text/event-stream": {
    schema: z.string().openapi({
      description:
        "`data: {chunk}` events, then `data: [DONE]`; a failure after " +
        'the first byte is a `data: {"error": …}` event before [DONE]',
    }),
  },
};

export const chatRoute = createRoute({
  method: "post",
  path: "/completions",
  operationId: "createChatCompletion",
  summary: "OpenAI-compatible chat completion (streamed with stream: true)",
  request: {
    body: { required: true, content: { "application/json": { schema: ChatCompletionRequest } } },
  },
  responses: {
    200: {
      description: "The completion, or its SSE chunks",
      content: { "application/json": { schema: ChatCompletionResponse }, ...sse },
    },
    ...problemResponses("openai", KEY_ERRORS, BODY_ERRORS, MODEL_ERRORS),
  },
});

export const completionRoute = createRoute({
  method: "post",
  path: "/",
  operationId: "createCompletion",
  summary: "OpenAI-compatible text completion (streamed with stream: true)",
  request: {
    body: { required: true, content: { "application/json": { schema: CompletionRequest } } },
  },
  responses: {
    200: {
      description: "The completion, or its SSE chunks",
      content: { "application/json": { schema: CompletionResponse }, ...sse },
    },
    ...problemResponses("openai", KEY_ERRORS, BODY_ERRORS, MODEL_ERRORS),
  },
});
