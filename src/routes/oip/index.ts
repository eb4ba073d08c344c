// Open Inference Protocol v2 (KServe / Triton REST) for every edge model: health, metadata,
// inference through the shared codec (src/protocols/), and the Triton extensions clients probe.
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ServiceError } from "../../errors/service-error";
import { readOipBody } from "../../protocols/oip-body";
import { encodeInferResponse, parseInferRequest } from "../../protocols/oip-infer";
import { modelConfig } from "../../protocols/triton-model-config";
import { capability, type ServedModel } from "../../tasks";
import { serverTiming } from "../http/server-timing";
import type { AppEnv } from "../http/services";
import { findModel, requireReady } from "../../tasks/model-lookup";
import { validationHook } from "../http/validation";
import { requireScope } from "../http/auth";
import {
  inferSpec,
  liveRoute,
  modelRoutes,
  readyRoute,
  repositoryIndexSpec,
  serverRoute,
} from "./openapi-routes";
import { repositoryIndex } from "./repository";

const SERVER = {
  name: "edge-inference",
  version: "0.1.0",
  extensions: [
    "binary_tensor_data",
    "model_configuration",
    "model_repository",
    "model_repository_metadata",
  ],
};

/** Largest tensor (elements) one infer request may send: keeps the isolate far from 128 MB. */
const MAX_ELEMENTS = 1_000_000;

/** The version a request names, if its path has one. */
const versionOf = (params: object): string | undefined =>
  "version" in params && typeof params.version === "string" ? params.version : undefined;

function versionCheck(model: ServedModel, version: string | undefined): void {
  if (version !== undefined && version !== model.manifest.version) {
    throw new ServiceError(
      404,
      "model_not_found",
      `Model "${model.manifest.name}" has no version ${version} (serving ` +
        `${model.manifest.version})`,
      {
        field: "version",
      },
    );
  }
}

/**
 * Mounted at the root: the protocol's paths are all under /v2, and its server metadata answers at
 * /v2/ as well. Health and server metadata are public, as Triton's and KServe's are; the model and
 * repository routes need a key. Bodies are read by the OIP codec (JSON with or without a
 * Content-Type, gzip/deflate, Triton binary tensors, bounded by MAX_BODY_BYTES raw and inflated).
 */
export const oipRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
oipRoutes.use("/v2/models/*", requireScope("classify"));
oipRoutes.use("/v2/repository/*", requireScope("classify"));

oipRoutes.openapi(serverRoute, (c) => c.json(SERVER, 200));
oipRoutes.get("/v2/", (c) => c.json(SERVER));
oipRoutes.openapi(liveRoute, (c) => c.json({ live: true }, 200));
oipRoutes.openapi(readyRoute, async (c) => {
  // OIP readiness covers the models OIP serves: those with a tensor capability (an origin
  // LLM reached over vLLM has none, and its readiness shows in /v1/models).
  const models = c
    .get("services")
    .list()
    .filter((model) => model.capabilities.tensors !== undefined);
  const [states, missing] = await Promise.all([
    Promise.all(models.map((model) => model.ready())),
    c.var.fraudStores(c.env).missingMigrations(),
  ]);
  const ready = states.every(Boolean) && missing.length === 0;
  if (ready) return c.json({ ready }, 200);
  const waiting = models
    .filter((_, i) => !states[i])
    .map((model) => `${model.manifest.name}: ${model.failure() ?? "loading"}`);
  // A Worker deployed without its D1 migrations is not ready: the webhooks answer 503 until then.
  if (missing.length > 0) waiting.push(`missing D1 migrations: ${missing.join(", ")}`);
  return c.json(
    {
      ready,
      error: `Not ready (${waiting.join("; ")})`,
      ...(missing.length === 0 ? {} : { not_configured: { missing_migrations: missing } }),
    },
    503,
  );
});

oipRoutes.post("/v2/repository/index", async (c) => {
  const body = await readOipBody(c.req.raw, { maxBytes: Number(c.env.MAX_BODY_BYTES) });
  return c.json(repositoryIndex(c.get("services").list(), body.json), 200);
});
oipRoutes.openAPIRegistry.registerPath(repositoryIndexSpec);

async function infer(
  c: Context<AppEnv>,
  name: string,
  version: string | undefined,
): Promise<Response> {
  const model = findModel(c.get("services"), name, "name");
  versionCheck(model, version);
  const tensors = capability(model, "tensors", "name");
  const call = await parseInferRequest(c.req.raw, {
    maxBytes: Number(c.env.MAX_BODY_BYTES),
    maxElements: MAX_ELEMENTS,
  });
  await requireReady(model);
  const { outputs, timings } = await tensors.infer(call.inputs, {
    ...(call.outputs === undefined ? {} : { outputNames: call.outputs }),
    signal: c.req.raw.signal,
  });
  const result = {
    model_name: model.manifest.name,
    model_version: model.manifest.version,
    ...(call.id === undefined ? {} : { id: call.id }),
    outputs,
  };
  return encodeInferResponse(result, call, {
    "server-timing": serverTiming({ inferMs: timings.runMs }),
  });
}

for (const [prefix, versioned] of [
  ["/v2/models/{name}", false],
  ["/v2/models/{name}/versions/{version}", true],
] as const) {
  const route = modelRoutes(prefix, versioned);
  oipRoutes.openapi(route.metadata, (c) => {
    const params = c.req.valid("param");
    const { name } = params;
    const version = versionOf(params);
    const model = findModel(c.get("services"), name, "name");
    versionCheck(model, version);
    const { manifest } = model;
    const { graph } = capability(model, "tensors", "name");
    return c.json(
      {
        name: manifest.name,
        versions: [manifest.version],
        platform: "onnxruntime_onnx",
        inputs: graph.inputs,
        outputs: graph.outputs,
      },
      200,
    );
  });
  oipRoutes.openapi(route.ready, async (c) => {
    const params = c.req.valid("param");
    const { name } = params;
    const version = versionOf(params);
    const model = findModel(c.get("services"), name, "name");
    versionCheck(model, version);
    if (await model.ready()) return c.json({ name, ready: true }, 200);
    return c.json(
      {
        name,
        ready: false,
        error: `Model "${name}" is not ready: ${model.failure() ?? "loading"}`,
      },
      503,
    );
  });
  oipRoutes.openapi(route.config, (c) => {
    const params = c.req.valid("param");
    const { name } = params;
    const version = versionOf(params);
    const model = findModel(c.get("services"), name, "name");
    versionCheck(model, version);
    const { manifest } = model;
    const { graph } = capability(model, "tensors", "name");
    return c.json(
      modelConfig({
        name: manifest.name,
        version: manifest.version,
        inputs: graph.inputs,
        outputs: graph.outputs,
        parameters: { task: manifest.task, runtime: manifest.runtime },
      }),
      200,
    );
  });

  // The body is read by the codec (no Content-Type needed, gzip/deflate, binary tensors),
  // so the route is documented here and handled without the JSON validator.
  oipRoutes.openAPIRegistry.registerPath(inferSpec(prefix, versioned));
  const honoPath = prefix.replace(/\{(\w+)\}/g, ":$1");
  oipRoutes.post(`${honoPath}/infer`, (c) =>
    infer(c, c.req.param("name") ?? "", c.req.param("version")),
  );
}
