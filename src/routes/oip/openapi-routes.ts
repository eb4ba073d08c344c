// The OpenAPI declarations of the OIP v2 routes, one per path: the handlers in index.ts pass
// them to openapi() or registerPath in the order the document lists them.
import { createRoute, type RouteConfig, z } from "@hono/zod-openapi";
import { InferRequestSchema } from "../../protocols/oip-infer";
import { BODY_ERRORS, MODEL_ERRORS, problemResponses, KEY_ERRORS } from "../http/problems";
import { IndexRequestSchema } from "./repository";
import {
  ModelMetadata,
  ModelParams,
  Readiness,
  ServerMetadata,
  ServerReady,
  VersionedParams,
} from "./schemas";

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/** The model routes, once per prefix; `versioned` adds the {version} path parameter. */
export const modelRoutes = (prefix: string, versioned: boolean) => {
  const params = versioned ? VersionedParams : ModelParams;
  const id = (operation: string) => (versioned ? `${operation}Version` : operation);
  return {
    metadata: createRoute({
      method: "get",
      path: prefix,
      operationId: id("modelMetadata"),
      summary: "Model metadata: name, versions, platform, input and output tensors",
      request: { params },
      responses: {
        200: json(ModelMetadata, "Model metadata"),
        ...problemResponses("oip", KEY_ERRORS, 404),
      },
    }),
    ready: createRoute({
      method: "get",
      path: `${prefix}/ready`,
      operationId: id("modelReady"),
      summary: "Model readiness: 200 when ready, 503 while loading or failed",
      request: { params },
      responses: {
        200: json(Readiness, "Ready"),
        503: json(Readiness, "Not ready"),
        ...problemResponses("oip", KEY_ERRORS, 404),
      },
    }),
    config: createRoute({
      method: "get",
      path: `${prefix}/config`,
      operationId: id("modelConfig"),
      summary: "Triton model configuration",
      request: { params },
      responses: {
        200: json(z.object({}).loose(), "Triton model configuration (model_config.proto as JSON)"),
        ...problemResponses("oip", KEY_ERRORS, 404),
      },
    }),
  };
};

export const serverRoute = createRoute({
  method: "get",
  path: "/v2",
  operationId: "serverMetadata",
  summary: "Server metadata: name, version and the protocol extensions it supports (also at /v2/)",
  security: [],
  responses: { 200: json(ServerMetadata, "Server metadata") },
});

export const liveRoute = createRoute({
  method: "get",
  path: "/v2/health/live",
  operationId: "serverLive",
  summary: "Liveness: the server answers",
  security: [],
  responses: { 200: json(z.object({ live: z.boolean() }), "Live") },
});

export const readyRoute = createRoute({
  method: "get",
  path: "/v2/health/ready",
  operationId: "serverReady",
  summary: "Readiness: 200 when every served model is ready, 503 otherwise",
  security: [],
  responses: {
    200: json(ServerReady, "Every model is ready"),
    503: json(ServerReady, "Some model is not ready"),
  },
});

/** POST /v2/repository/index: its body (optional) is read by the OIP codec. */
export const repositoryIndexSpec: RouteConfig = {
  method: "post",
  path: "/v2/repository/index",
  operationId: "repositoryIndex",
  summary: "Triton model repository index: every model with its state",
  request: {
    body: { required: false, content: { "application/json": { schema: IndexRequestSchema } } },
  },
  responses: {
    200: json(
      z.array(
        z.object({
          name: z.string(),
          version: z.string(),
          state: z.string(),
          reason: z.string().optional(),
        }),
      ),
      "Models and states",
    ),
    ...problemResponses("oip", KEY_ERRORS, BODY_ERRORS),
  },
};

/** POST {prefix}/infer: its body is read by the codec, not by the JSON validator. */
export const inferSpec = (prefix: string, versioned: boolean): RouteConfig => ({
  method: "post",
  path: `${prefix}/infer`,
  operationId: versioned ? "modelInferVersion" : "modelInfer",
  summary: "Run the model: JSON tensors or Triton's binary tensor extension",
  request: {
    params: versioned ? VersionedParams : ModelParams,
    body: {
      required: true,
      description:
        "JSON (any or no Content-Type, optionally gzip/deflate), or a JSON header of " +
        "Inference-Header-Content-Length bytes followed by binary tensor data",
      content: {
        "application/json": { schema: InferRequestSchema.openapi("InferRequest") },
        "application/octet-stream": { schema: { type: "string", format: "binary" } },
      },
    },
  },
  responses: {
    200: {
      description:
        "Inference result: JSON, or a JSON header of Inference-Header-Content-Length bytes " +
        "followed by binary output data",
      content: {
        "application/json": { schema: z.object({}).loose() },
        "application/octet-stream": { schema: { type: "string", format: "binary" } },
      },
    },
    ...problemResponses("oip", KEY_ERRORS, BODY_ERRORS, MODEL_ERRORS),
  },
});
