// GET /v1/models: what this deployment serves, where each model runs, what it can do and how it
// scored, in OpenAI's list shape ({object: "list", data: [{id, object: "model", created,
// owned_by}]}) so OpenAI SDKs' models.list() reads it; the rest of each item is ours.
import { memoSlot } from "../../memos";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { primaryGraph } from "../../models/manifest";
import type { Capabilities, ServedModel } from "../../tasks";
import { problemResponses, KEY_ERRORS } from "../http/problems";
import type { AppEnv } from "../http/services";
import { findModel } from "../../tasks/model-lookup";
import { requireApiKey } from "../http/auth";
import { validationHook } from "../http/validation";

const TensorSpec = z.object({
  name: z.string(),
  datatype: z.string(),
  shape: z.array(z.number().int()),
});

const ModelCard = z
  .object({
    id: z.string().openapi({ example: "spam-classifier" }),
    object: z.literal("model"),
    created: z.number().int().openapi({
      description:
        "Unix seconds since this isolate has served the model (vLLM reports the request time)",
    }),
    owned_by: z.string(),
    version: z.string(),
    task: z.string().openapi({ example: "text-classification" }),
    runtime: z.enum(["wasm", "origin"]),
    protocol: z
      .string()
      .optional()
      .openapi({ description: "How the origin is reached (runtime origin only)" }),
    capabilities: z.array(z.string()).openapi({ example: ["tensors"] }),
    state: z.enum(["unloaded", "loading", "ready", "failed"]),
    labels: z.array(z.string()).optional(),
    context_length: z.number().int().optional(),
    max_model_len: z.number().int().optional(),
    inputs: z.array(TensorSpec).optional(),
    outputs: z.array(TensorSpec).optional(),
    sha256: z.string().optional(),
    bytes: z.number().int().optional(),
    evaluation: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi("ModelCard");

const ModelList = z
  .object({ object: z.literal("list"), data: z.array(ModelCard) })
  .openapi("ModelList");

const path = "/";

const route = createRoute({
  method: "get",
  path,
  operationId: "listModels",
  summary: "List the served models (OpenAI list shape, with where each runs and how it scored)",
  responses: {
    200: {
      description: "Every model this deployment serves",
      content: { "application/json": { schema: ModelList } },
    },
    ...problemResponses("openai", KEY_ERRORS),
  },
});

const retrievePath = "/{model}";

const retrieveRoute = createRoute({
  method: "get",
  path: retrievePath,
  operationId: "retrieveModel",
  summary: "One served model (OpenAI's models.retrieve)",
  request: { params: z.object({ model: z.string().min(1) }) },
  responses: {
    200: { description: "The model", content: { "application/json": { schema: ModelCard } } },
    ...problemResponses("openai", KEY_ERRORS, 404),
  },
});

/** Unix seconds of the first listing in this isolate (module-scope clocks read 0 in Workers). */
const servedSince = memoSlot<number>("openai.served-since");

const capabilityNames = (capabilities: Capabilities) =>
  Object.entries(capabilities)
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name);

function graphFields(graph: ReturnType<typeof primaryGraph>) {
  return graph === undefined
    ? {}
    : { inputs: graph.inputs, outputs: graph.outputs, sha256: graph.sha256, bytes: graph.bytes };
}

function card({ manifest, state, capabilities }: ServedModel) {
  servedSince.value ??= Math.floor(Date.now() / 1000);
  return {
    id: manifest.name,
    object: "model" as const,
    created: servedSince.value,
    owned_by: "edge-inference",
    version: manifest.version,
    task: manifest.task,
    runtime: manifest.runtime,
    ...(manifest.runtime === "origin" ? { protocol: manifest.protocol } : {}),
    capabilities: capabilityNames(capabilities),
    state: state(),
    ...(manifest.task === "text-classification" || manifest.task === "fraud-scoring"
      ? { labels: [...manifest.labels] }
      : {}),
    ...(manifest.task === "text-generation"
      ? {
          context_length: manifest.generation.contextLength,
          max_model_len: manifest.generation.contextLength,
        }
      : {}),
    ...graphFields(primaryGraph(manifest)),
    ...("evaluation" in manifest ? { evaluation: manifest.evaluation } : {}),
  };
}

export const modelRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
modelRoutes.use(requireApiKey);
modelRoutes
  .openapi(route, (c) =>
    c.json({ object: "list" as const, data: c.get("services").list().map(card) }, 200),
  )
  .openapi(retrieveRoute, (c) =>
    c.json(card(findModel(c.get("services"), c.req.valid("param").model, "model")), 200),
  );
