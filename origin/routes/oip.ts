// Open Inference Protocol v2 (KServe/Triton REST) for the origin's tensor models: health,
// metadata, model configuration and inference.
import { Hono } from "hono";
import { ServiceError } from "../../src/errors/service-error";
import { encodeInferResponse, parseInferRequest } from "../../src/protocols/oip-infer";
import { modelConfig } from "../../src/protocols/triton-model-config";
import type { Drain } from "../http/drain";
import type { HostedModel, ModelHost } from "../model-host";

const SERVER = {
  name: "edge-inference-origin",
  version: "0.2.0",
  extensions: ["binary_tensor_data", "model_configuration"],
};
/** Largest request (tensor elements) one infer may send. */
const MAX_ELEMENTS = 16_000_000;

function checkVersion(model: HostedModel, version: string | undefined): void {
  if (version !== undefined && version !== model.manifest.version) {
    throw new ServiceError(
      404,
      "model_not_found",
      `Model "${model.manifest.name}" has no version ` +
        `${version} (serving ${model.manifest.version})`,
      { field: "version" },
    );
  }
}

export function oipRoutes(host: ModelHost, maxBodyBytes: number, drain: Drain): Hono {
  const app = new Hono();
  app.get("/v2", (c) => c.json(SERVER));
  app.get("/v2/health/live", (c) => c.json({ live: true }));
  app.get("/v2/health/ready", (c) => {
    const ready =
      !drain.draining && [...host.models.values()].every((model) => model.status === "ready");
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
      return c.json({
        name: manifest.name,
        versions: [manifest.version],
        platform: "onnxruntime_onnx",
        inputs,
        outputs,
      });
    });
    app.get(`${prefix}/ready`, (c) => {
      const model = modelOf(c);
      const ready = !drain.draining && model.status === "ready";
      return c.json({ name: model.manifest.name, ready }, ready ? 200 : 503);
    });
    app.get(`${prefix}/config`, (c) => {
      const { manifest } = modelOf(c);
      return c.json(
        modelConfig({
          name: manifest.name,
          version: manifest.version,
          inputs: manifest.graph.inputs,
          outputs: manifest.graph.outputs,
          parameters: { task: manifest.task },
        }),
      );
    });
    app.post(`${prefix}/infer`, async (c) => {
      const model = modelOf(c);
      const call = await parseInferRequest(c.req.raw, {
        maxBytes: maxBodyBytes,
        maxElements: MAX_ELEMENTS,
      });
      host.requireReady(model);
      if (model.tensor === undefined) {
        throw new ServiceError(
          400,
          "invalid_request",
          `Model "${model.manifest.name}" generates text: use POST /v1/completions`,
          { field: "name" },
        );
      }
      const { outputs, runMs } = await model.tensor.run(call.inputs, call.outputs);
      const result = {
        model_name: model.manifest.name,
        model_version: model.manifest.version,
        ...(call.id === undefined ? {} : { id: call.id }),
        outputs,
      };
      return encodeInferResponse(result, call, {
        "server-timing": `infer;dur=${runMs.toFixed(2)}`,
      });
    });
  }
  return app;
}
