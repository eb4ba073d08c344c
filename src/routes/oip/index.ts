// Open Inference Protocol v2 (KServe / Triton REST) for every edge model: server and model
// health, metadata, inference (JSON tensors or Triton's binary tensor data, compressed or
// not, through the shared codec in src/protocols/), and the Triton extensions clients probe:
// model configuration and the model repository index.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ServiceError } from "../../errors/service-error";
import { readOipBody } from "../../protocols/oip-body";
import { encodeInferResponse, InferRequestSchema, parseInferRequest } from "../../protocols/oip-infer";
import { modelConfig } from "../../protocols/triton-model-config";
import type { ServedModel } from "../../tasks";
import { serverTiming } from "../server-timing";
import { findModel, requireReady, type AppEnv } from "../services";
import { validationHook } from "../validation";
import { missingMigrations } from "../../storage/d1-schema";
import { IndexRequestSchema, repositoryIndex } from "./repository";

const SERVER = {
  name: "edge-inference",
  version: "0.1.0",
  extensions: ["binary_tensor_data", "model_configuration", "model_repository", "model_repository_metadata"],
};

/** Largest tensor (elements) one infer request may send: keeps the isolate far from 128 MB. */
const MAX_ELEMENTS = 1_000_000;

const TensorMetadata = z.object({ name: z.string(), datatype: z.string(), shape: z.array(z.number()) });
const ModelMetadata = z
  .object({ name: z.string(), versions: z.array(z.string()), platform: z.string(), inputs: z.array(TensorMetadata), outputs: z.array(TensorMetadata) })
  .openapi("ModelMetadata");
const Readiness = z.object({ name: z.string(), ready: z.boolean(), error: z.string().optional() });
const OipError = z.object({ error: z.string() }).loose().openapi("OipError");

const ModelParams = z.object({ name: z.string().min(1), version: z.string().min(1).optional() });

function versionCheck(model: ServedModel, version: string | undefined): void {
  if (version !== undefined && version !== model.manifest.version) {
    throw new ServiceError(404, "model_not_found", `Model "${model.manifest.name}" has no version ${version} (serving ${model.manifest.version})`, {
      field: "version",
    });
  }
}

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

const routes = (prefix: string) => ({
  metadata: createRoute({ method: "get", path: `${prefix}`, request: { params: ModelParams }, responses: { 200: json(ModelMetadata, "Model metadata") } }),
  ready: createRoute({
    method: "get",
    path: `${prefix}/ready`,
    request: { params: ModelParams },
    responses: { 200: json(Readiness, "Ready"), 503: json(Readiness, "Not ready") },
  }),
  config: createRoute({
    method: "get",
    path: `${prefix}/config`,
    request: { params: ModelParams },
    responses: { 200: json(z.object({}).loose(), "Triton model configuration (model_config.proto as JSON)") },
  }),
});

export const oipRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

oipRoutes.get("/v2", (c) => c.json(SERVER));
oipRoutes.get("/v2/", (c) => c.json(SERVER));
oipRoutes.get("/v2/health/live", (c) => c.json({ live: true }));
oipRoutes.get("/v2/health/ready", async (c) => {
  const models = c.get("services").list();
  const [states, missing] = await Promise.all([Promise.all(models.map((model) => model.ready())), missingMigrations(c.env.DB)]);
  const ready = states.every(Boolean) && missing.length === 0;
  if (ready) return c.json({ ready }, 200);
  const waiting = models.filter((_, i) => !states[i]).map((model) => `${model.manifest.name}: ${model.failure() ?? "loading"}`);
  // A Worker deployed without its D1 migrations is not ready: the webhooks answer 503 until then.
  if (missing.length > 0) waiting.push(`missing D1 migrations: ${missing.join(", ")}`);
  return c.json({ ready, error: `Not ready (${waiting.join("; ")})`, ...(missing.length === 0 ? {} : { not_configured: { missing_migrations: missing } }) }, 503);
});

oipRoutes.post("/v2/repository/index", async (c) => {
  const body = await readOipBody(c.req.raw, { maxBytes: Number(c.env.MAX_BODY_BYTES) });
  return c.json(repositoryIndex(c.get("services").list(), body.json), 200);
});
oipRoutes.openAPIRegistry.registerPath({
  method: "post",
  path: "/v2/repository/index",
  summary: "Triton model repository index: every model with its state",
  request: { body: { required: false, content: { "application/json": { schema: IndexRequestSchema } } } },
  responses: { 200: json(z.array(z.object({ name: z.string(), version: z.string(), state: z.string(), reason: z.string().optional() })), "Models and states") },
});

async function infer(c: Context<AppEnv>, name: string, version: string | undefined): Promise<Response> {
  const model = findModel(c.get("services"), name, "name");
  versionCheck(model, version);
  const call = await parseInferRequest(c.req.raw, { maxBytes: Number(c.env.MAX_BODY_BYTES), maxElements: MAX_ELEMENTS });
  await requireReady(model);
  const { outputs, timings } = await model.infer(call.inputs, call.outputs);
  const result = { model_name: model.manifest.name, model_version: model.manifest.version, ...(call.id === undefined ? {} : { id: call.id }), outputs };
  return encodeInferResponse(result, call, { "server-timing": serverTiming({ inferMs: timings.runMs }) });
}

for (const prefix of ["/v2/models/{name}", "/v2/models/{name}/versions/{version}"]) {
  const route = routes(prefix);
  oipRoutes.openapi(route.metadata, (c) => {
    const { name, version } = c.req.valid("param");
    const model = findModel(c.get("services"), name, "name");
    versionCheck(model, version);
    const { manifest } = model;
    return c.json({ name: manifest.name, versions: [manifest.version], platform: "onnxruntime_onnx", inputs: manifest.inputs, outputs: manifest.outputs }, 200);
  });
  oipRoutes.openapi(route.ready, async (c) => {
    const { name, version } = c.req.valid("param");
    const model = findModel(c.get("services"), name, "name");
    versionCheck(model, version);
    if (await model.ready()) return c.json({ name, ready: true }, 200);
    return c.json({ name, ready: false, error: `Model "${name}" is not ready: ${model.failure() ?? "loading"}` }, 503);
  });
  oipRoutes.openapi(route.config, (c) => {
    const { name, version } = c.req.valid("param");
    const model = findModel(c.get("services"), name, "name");
    versionCheck(model, version);
    const { manifest } = model;
    return c.json(modelConfig({ ...manifest, parameters: { task: manifest.task, runtime: manifest.runtime } }), 200);
  });

  // The body is read by the codec (no Content-Type needed, gzip/deflate, binary tensors),
  // so the route is documented here and handled without the JSON validator.
  oipRoutes.openAPIRegistry.registerPath({
    method: "post",
    path: `${prefix}/infer`,
    request: {
      params: ModelParams,
      body: {
        required: true,
        description: "JSON (any or no Content-Type, optionally gzip/deflate), or a JSON header of Inference-Header-Content-Length bytes followed by binary tensor data",
        content: { "application/json": { schema: InferRequestSchema.openapi("InferRequest") }, "application/octet-stream": { schema: { type: "string", format: "binary" } } },
      },
    },
    responses: {
      200: {
        description: "Inference result: JSON, or a JSON header of Inference-Header-Content-Length bytes followed by binary output data",
        content: { "application/json": { schema: z.object({}).loose() }, "application/octet-stream": { schema: { type: "string", format: "binary" } } },
      },
      400: json(OipError, "Invalid request"),
    },
  });
  const honoPath = prefix.replace(/\{(\w+)\}/g, ":$1");
  oipRoutes.post(`${honoPath}/infer`, (c) => infer(c, c.req.param("name") ?? "", c.req.param("version")));
}
