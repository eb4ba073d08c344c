// Open Inference Protocol v2 (KServe / Triton REST) for every edge model: server and model
// health, metadata and JSON-tensor inference.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import { DataTypeSchema } from "../../runtime/tensor";
import type { ServedModel } from "../../tasks";
import { serverTiming } from "../server-timing";
import { findModel, requireReady, type AppEnv } from "../services";
import { validationHook } from "../validation";
import { fromJsonTensor, toJsonTensor } from "../../protocols/oip-tensors";

const SERVER = { name: "edge-inference", version: "0.1.0", extensions: ["model_repository_metadata"] };

/** Largest tensor (elements) one infer request may send: keeps the isolate far from 128 MB. */
const MAX_ELEMENTS = 1_000_000;

const InferInput = z.object({
  name: z.string().min(1),
  shape: z.array(z.number().int().min(0)).max(8),
  datatype: DataTypeSchema,
  parameters: z.record(z.string(), z.unknown()).optional(),
  data: z.unknown(),
});

const InferRequest = z
  .object({
    id: z.string().max(256).optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    inputs: z.array(InferInput).min(1).max(32),
    outputs: z.array(z.object({ name: z.string().min(1), parameters: z.record(z.string(), z.unknown()).optional() })).optional(),
  })
  .openapi("InferRequest");

const TensorMetadata = z.object({ name: z.string(), datatype: z.string(), shape: z.array(z.number()) });
const ModelMetadata = z
  .object({ name: z.string(), versions: z.array(z.string()), platform: z.string(), inputs: z.array(TensorMetadata), outputs: z.array(TensorMetadata) })
  .openapi("ModelMetadata");

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
    responses: { 200: json(z.object({ name: z.string(), ready: z.boolean() }), "Ready"), 503: json(z.object({ name: z.string(), ready: z.boolean() }), "Not ready") },
  }),
  infer: createRoute({
    method: "post",
    path: `${prefix}/infer`,
    request: { params: ModelParams, body: { required: true, content: { "application/json": { schema: InferRequest } } } },
    responses: { 200: json(z.object({}).loose(), "Inference result") },
  }),
});

export const oipRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

oipRoutes.get("/v2", (c) => c.json(SERVER));
oipRoutes.get("/v2/health/live", (c) => c.json({ live: true }));
oipRoutes.get("/v2/health/ready", async (c) => {
  const models = c.get("services").list();
  const states = await Promise.all(models.map((model) => model.ready()));
  const ready = states.every(Boolean);
  return c.json({ ready }, ready ? 200 : 503);
});

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
    const ready = await model.ready();
    return c.json({ name, ready }, ready ? 200 : 503);
  });
  oipRoutes.openapi(route.infer, async (c) => {
    const { name, version } = c.req.valid("param");
    const request = c.req.valid("json");
    const model = findModel(c.get("services"), name, "name");
    versionCheck(model, version);
    const elements = request.inputs.reduce((sum, input) => sum + input.shape.reduce((n, dim) => n * dim, 1), 0);
    if (elements > MAX_ELEMENTS) {
      throw new ServiceError(413, "payload_too_large", `At most ${MAX_ELEMENTS} tensor elements per request, got ${elements}`, { field: "inputs" });
    }
    const feeds = Object.fromEntries(request.inputs.map((input, i) => [input.name, fromJsonTensor(input, `inputs.${i}`)]));
    if (Object.keys(feeds).length !== request.inputs.length) {
      throw new ServiceError(400, "invalid_request", "Each input name may appear once", { field: "inputs" });
    }
    await requireReady(model);
    const outputNames = request.outputs?.map((output) => output.name);
    const { outputs, timings } = await model.infer(feeds, outputNames);
    c.header("server-timing", serverTiming({ inferMs: timings.runMs }));
    return c.json(
      {
        model_name: model.manifest.name,
        model_version: model.manifest.version,
        ...(request.id === undefined ? {} : { id: request.id }),
        outputs: Object.entries(outputs).map(([outputName, tensor]) => toJsonTensor(outputName, tensor)),
      },
      200,
    );
  });
}
