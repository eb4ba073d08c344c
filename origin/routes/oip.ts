// Open Inference Protocol v2 (KServe / Triton REST) for the origin's tensor models:
// server and model health, metadata, and JSON-tensor inference on the tensor engine.
import { Hono } from "hono";
import { z } from "zod";
import { ServiceError } from "../../src/errors/service-error";
import { fromJsonTensor, toJsonTensor } from "../../src/protocols/oip-tensors";
import { DataTypeSchema } from "../../src/runtime/tensor";
import { parseWith, readJsonBody } from "../http/body";
import type { HostedModel, ModelHost } from "../model-host";

const SERVER = { name: "edge-inference-origin", version: "0.2.0", extensions: [] };
/** Largest request (tensor elements) one infer may send. */
const MAX_ELEMENTS = 16_000_000;

const InferRequest = z.object({
  id: z.string().max(256).optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
  inputs: z
    .array(z.object({ name: z.string().min(1), shape: z.array(z.number().int().min(0)).max(8), datatype: DataTypeSchema, parameters: z.record(z.string(), z.unknown()).optional(), data: z.unknown() }))
    .min(1)
    .max(64),
  outputs: z.array(z.object({ name: z.string().min(1), parameters: z.record(z.string(), z.unknown()).optional() })).optional(),
});

function checkVersion(model: HostedModel, version: string | undefined): void {
  if (version !== undefined && version !== model.manifest.version) {
    throw new ServiceError(404, "model_not_found", `Model "${model.manifest.name}" has no version ${version} (serving ${model.manifest.version})`, { field: "version" });
  }
}

export function oipRoutes(host: ModelHost, maxBodyBytes: number): Hono {
  const app = new Hono();
  app.get("/v2", (c) => c.json(SERVER));
  app.get("/v2/health/live", (c) => c.json({ live: true }));
  app.get("/v2/health/ready", (c) => {
    const ready = [...host.models.values()].every((model) => model.status === "ready");
    return c.json({ ready }, ready ? 200 : 503);
  });

  for (const prefix of ["/v2/models/:name", "/v2/models/:name/versions/:version"]) {
    const modelOf = (c: { req: { param(key: string): string | undefined } }) => {
      const model = host.find(c.req.param("name") ?? "", "name");
      checkVersion(model, c.req.param("version"));
      return model;
    };
    app.get(prefix, (c) => {
      const { manifest } = modelOf(c);
      const { inputs, outputs } = manifest.graph;
      return c.json({ name: manifest.name, versions: [manifest.version], platform: "onnxruntime_onnx", inputs, outputs });
    });
    app.get(`${prefix}/ready`, (c) => {
      const model = modelOf(c);
      const ready = model.status === "ready";
      return c.json({ name: model.manifest.name, ready }, ready ? 200 : 503);
    });
    app.post(`${prefix}/infer`, async (c) => {
      const model = modelOf(c);
      const request = parseWith(InferRequest, await readJsonBody(c, maxBodyBytes));
      const elements = request.inputs.reduce((sum, input) => sum + input.shape.reduce((n, dim) => n * dim, 1), 0);
      if (elements > MAX_ELEMENTS) throw new ServiceError(413, "payload_too_large", `At most ${MAX_ELEMENTS} tensor elements per request, got ${elements}`, { field: "inputs" });
      const feeds = Object.fromEntries(request.inputs.map((input, i) => [input.name, fromJsonTensor(input, `inputs.${i}`)]));
      if (Object.keys(feeds).length !== request.inputs.length) throw new ServiceError(400, "invalid_request", "Each input name may appear once", { field: "inputs" });
      host.requireReady(model);
      if (model.tensor === undefined) {
        throw new ServiceError(400, "invalid_request", `Model "${model.manifest.name}" generates text: use POST /v1/completions`, { field: "name" });
      }
      const { outputs, runMs } = await model.tensor.run(feeds, request.outputs?.map((output) => output.name));
      c.header("server-timing", `infer;dur=${runMs.toFixed(2)}`);
      return c.json({
        model_name: model.manifest.name,
        model_version: model.manifest.version,
        ...(request.id === undefined ? {} : { id: request.id }),
        outputs: Object.entries(outputs).map(([name, tensor]) => toJsonTensor(name, tensor)),
      });
    });
  }
  return app;
}
