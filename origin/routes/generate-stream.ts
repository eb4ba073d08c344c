// The tensor-stream protocol for diffusion models: POST /v2/models/{name}/generate_stream (SSE)
// and /generate (the final event as JSON).
import { Hono } from "hono";
import { toServiceError } from "../../src/errors/problem";
import { ServiceError } from "../../src/errors/service-error";
import {
  gaussianNoise,
  sizeOf,
  type DiffusionRequest,
  type DiffusionStep,
} from "../../src/generation/diffusion";
import { TensorStreamRequest } from "../../src/protocols/tensor-stream";
import type { DiffusionEngine } from "../engines/diffusion/engine";
import { parseWith, readJsonBody } from "../http/body";
import type { Drain } from "../http/drain";
import type { DiffusionConfig } from "../manifests";
import type { ModelHost } from "../model-host";

const encoder = new TextEncoder();
const frame = (value: unknown) =>
  encoder.encode(`data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`);

const invalid = (field: string, detail: string) =>
  new ServiceError(400, "invalid_request", detail, { field });

function sameShape(actual: readonly number[], expected: readonly number[]): boolean {
  return actual.length === expected.length && actual.every((dim, i) => dim === expected[i]);
}

/** Checks the body against the model's diffusion block and builds the loop's request. */
export function diffusionRequest(
  body: TensorStreamRequest,
  spec: DiffusionConfig,
): DiffusionRequest {
  const byName = new Map(body.inputs.map((input, i) => [input.name, { input, i }]));
  const unknown = body.inputs.find(
    (input) => !["input_ids", "noise", "attention_mask"].includes(input.name),
  );
  if (unknown !== undefined)
    throw invalid("inputs", `Unknown input "${unknown.name}": send input_ids and noise`);
  const ids = byName.get("input_ids");
  if (ids === undefined)
    throw invalid("inputs", 'Missing input "input_ids" (INT64 [n, promptLength])');
  const n = ids.input.shape[0] ?? 0;
  if (
    ids.input.datatype !== "INT64" ||
    !sameShape(ids.input.shape, [n, spec.promptLength]) ||
    n < 1
  ) {
    throw invalid(
      `inputs.${ids.i}.shape`,
      `input_ids must be INT64 [n, ${spec.promptLength}] with n ≥ 1`,
    );
  }
  if (
    ids.input.data.length !== n * spec.promptLength ||
    !ids.input.data.every((id) => Number.isInteger(id) && id >= 0)
  ) {
    throw invalid(
      `inputs.${ids.i}.data`,
      `input_ids must hold ${n * spec.promptLength} non-negative integers`,
    );
  }
  const latentSize = sizeOf(spec.latentShape);
  const params = body.parameters ?? {};
  let noise: Float32Array;
  const given = byName.get("noise");
  if (given !== undefined) {
    if (
      given.input.datatype !== "FP32" ||
      !sameShape(given.input.shape, [n, ...spec.latentShape])
    ) {
      throw invalid(
        `inputs.${given.i}.shape`,
        `noise must be FP32 [${[n, ...spec.latentShape].join(", ")}]`,
      );
    }
    if (given.input.data.length !== n * latentSize || !given.input.data.every(Number.isFinite))
      throw invalid(`inputs.${given.i}.data`, `noise must hold ${n * latentSize} finite numbers`);
    noise = Float32Array.from(given.input.data);
  } else if (params.seed !== undefined) {
    noise = new Float32Array(n * latentSize);
    for (let i = 0; i < n; i += 1)
      noise.set(gaussianNoise(params.seed + i, latentSize), i * latentSize);
  } else {
    throw invalid("inputs", 'Send the "noise" input, or parameters.seed for the origin to draw it');
  }
  return {
    inputIds: BigInt64Array.from(ids.input.data, BigInt),
    noise,
    n,
    params: {
      steps: params.steps ?? spec.defaults.steps,
      guidanceScale: params.guidance_scale ?? spec.defaults.guidanceScale,
      scheduler: params.scheduler ?? spec.defaults.scheduler,
    },
    previewEvery: params.preview_every ?? 1,
  };
}

/** One event as the protocol sends it: the step, whether it is the last, its tensors. */
export function eventBody(step: DiffusionStep, id: string | undefined) {
  const outputs = Object.entries(step.outputs).map(([name, tensor]) => ({
    name,
    datatype: tensor.datatype,
    shape: tensor.shape,
    data: tensor.data instanceof Float32Array ? Array.from(tensor.data) : [],
  }));
  return { ...(id === undefined ? {} : { id }), step: step.step, final: step.final, outputs };
}

function diffusionModel(
  host: ModelHost,
  name: string,
): { engine: DiffusionEngine; spec: DiffusionConfig } {
  const model = host.find(name, "model");
  if (model.manifest.kind !== "diffusion")
    throw new ServiceError(400, "invalid_request", `Model "${name}" is not a text-to-image model`, {
      field: "model",
    });
  host.requireReady(model);
  if (model.diffusion === undefined)
    throw new ServiceError(503, "model_not_ready", `Model "${name}" is not loaded`, {
      headers: { "retry-after": "5" },
    });
  return { engine: model.diffusion, spec: model.manifest.diffusion };
}

/**
 * The tensor-stream protocol on the origin (src/protocols/tensor-stream.ts; README "Tensor-
 * stream protocol"): POST /v2/models/{name}/generate_stream — prompt ids and noise in, an
 * SSE stream of one OIP tensor per event (each reported step's predicted clean latent, then
 * the decoded image), `data: [DONE]` — and POST /v2/models/{name}/generate, the final event
 * alone as JSON. Input errors are the response's status; a failure once the stream has
 * started is a `data: {"error": …}` event before [DONE]. A client that leaves drops its
 * request from the engine's loop; one still running when a drain's grace period ends gets
 * the error event (or a 503).
 */
export function generateStreamRoutes(host: ModelHost, maxBodyBytes: number, drain: Drain): Hono {
  const app = new Hono();
  const start = async (name: string, raw: unknown, signal: AbortSignal) => {
    const body = parseWith(TensorStreamRequest, raw);
    const { engine, spec } = diffusionModel(host, name);
    const events = await engine.submit(diffusionRequest(body, spec), signal);
    return { events, id: body.id };
  };

  app.post("/v2/models/:name/generate_stream", async (c) => {
    const abort = new AbortController();
    c.req.raw.signal.addEventListener("abort", () => abort.abort(), { once: true });
    const { events, id } = await start(
      c.req.param("name"),
      await readJsonBody(c, maxBodyBytes),
      AbortSignal.any([abort.signal, drain.expired]),
    );
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        const send = (value: unknown) => {
          if (!abort.signal.aborted) controller.enqueue(frame(value));
        };
        try {
          let final = false;
          for await (const step of events) {
            send(eventBody(step, id));
            final = step.final;
          }
          if (!final && drain.expired.aborted) throw drain.error();
        } catch (error) {
          const failure = toServiceError(error);
          send({ error: { message: failure.message, code: failure.code, status: failure.status } });
        }
        if (abort.signal.aborted) return;
        send("[DONE]");
        controller.close();
      },
      cancel() {
        abort.abort();
      },
    });
    return new Response(body, {
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    });
  });

  app.post("/v2/models/:name/generate", async (c) => {
    const abort = new AbortController();
    c.req.raw.signal.addEventListener("abort", () => abort.abort(), { once: true });
    const { events, id } = await start(
      c.req.param("name"),
      await readJsonBody(c, maxBodyBytes),
      AbortSignal.any([abort.signal, drain.expired]),
    );
    let last: DiffusionStep | undefined;
    for await (const step of events) last = step;
    if (last?.final !== true && drain.expired.aborted) throw drain.error();
    if (last === undefined || !last.final)
      throw new ServiceError(500, "internal_error", "The diffusion loop ended without an image");
    return c.json(eventBody(last, id));
  });
  return app;
}
