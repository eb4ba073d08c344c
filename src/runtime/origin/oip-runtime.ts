// The tensor capability over a GPU origin that speaks the Open Inference Protocol v2 (Triton,
// KServe, or the reference origin in origin/).
import { z } from "zod";
import { ServiceError } from "../../errors/service-error";
import { fromJsonTensor, toJsonTensor } from "../../protocols/oip-tensors";
import { checkFeeds, checkOutputNames } from "../feeds";
import type { InferenceRuntime, RunResult } from "../runtime";
import { deadlines } from "./deadlines";
import type { OriginConfig } from "./origin-config";
import { DataTypeSchema, shapeMatches, type Tensor, type TensorSpec } from "../../tensors/tensor";

export interface OriginRuntimeOptions {
  model: { name: string; version: string };
  inputs: readonly TensorSpec[];
  outputs: readonly TensorSpec[];
  origin: OriginConfig;
}

const WireTensor = z.object({
  name: z.string().min(1),
  datatype: DataTypeSchema,
  shape: z.array(z.number().int().min(0)),
  data: z.unknown(),
});
const MetadataResponse = z.object({
  name: z.string(),
  versions: z.array(z.string()).optional(),
  inputs: z.array(
    WireTensor.omit({ data: true }).extend({ shape: z.array(z.number().int().min(-1)) }),
  ),
  outputs: z.array(
    WireTensor.omit({ data: true }).extend({ shape: z.array(z.number().int().min(-1)) }),
  ),
});
const InferResponse = z.object({
  model_name: z.string(),
  model_version: z.string().optional(),
  outputs: z.array(WireTensor),
});
/** What an OIP server says when it refuses a request (OIP's `error`, or RFC 9457's `detail`). */
const ErrorBody = z.object({ error: z.string().optional(), detail: z.string().optional() }).loose();

function upstream(detail: string, cause?: unknown): ServiceError {
  return new ServiceError(502, "upstream_error", detail, {
    cause,
    headers: { "retry-after": "5" },
  });
}

/**
 * Each declared tensor must appear in the origin's metadata with the same datatype and a compatible
 * shape.
 */
function signatureMismatch(
  declared: readonly TensorSpec[],
  served: readonly TensorSpec[],
): string | undefined {
  for (const spec of declared) {
    const other = served.find((tensor) => tensor.name === spec.name);
    if (other === undefined) return `has no tensor "${spec.name}"`;
    const compatible =
      other.datatype === spec.datatype &&
      other.shape.length === spec.shape.length &&
      other.shape.every((dim, i) => dim === -1 || spec.shape[i] === -1 || dim === spec.shape[i]);
    if (!compatible) {
      return (
        `declares "${spec.name}" as ${other.datatype} [${other.shape.join(", ")}], ` +
        `the manifest as ${spec.datatype} [${spec.shape.join(", ")}]`
      );
    }
  }
  return undefined;
}

/**
 * A runtime whose model runs on the origin named by ORIGIN_URL.
 *
 * Feeds are checked here first, so the origin only ever sees well-formed tensors; whatever the
 * origin does wrong is a 5xx of ours, never a client's 4xx, and never an unexplained 500.
 */
export function createOipRuntime(options: OriginRuntimeOptions): InferenceRuntime {
  const { model, origin } = options;
  let verified: Promise<void> | undefined;

  const base = (): string => {
    if (!origin.url) {
      throw new ServiceError(
        503,
        "not_configured",
        `Model "${model.name}" runs on the GPU origin, and ORIGIN_URL is not set`,
      );
    }
    const root = origin.url.replace(/\/+$/, "");
    return (
      `${root}/v2/models/${encodeURIComponent(model.name)}` +
      `/versions/${encodeURIComponent(model.version)}`
    );
  };

  /** One call; `response.text()`/`json()` must be read before the returned promise's
   * deadline is cleared, so callers read the body inside `read`. */
  async function call<T>(
    path: string,
    init: RequestInit,
    signal: AbortSignal | undefined,
    read: (response: Response) => Promise<T>,
  ): Promise<T> {
    const url = `${base()}${path}`;
    const headers = new Headers(init.headers);
    if (origin.apiKey) headers.set("authorization", `Bearer ${origin.apiKey}`);
    const limits = deadlines(signal);
    limits.phase(origin.timeoutMs, "did not answer");
    try {
      const response = await fetch(url, { ...init, headers, signal: limits.signal });
      return await read(response);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (limits.timedOut()) throw limits.signal.reason;
      if (error instanceof ServiceError) throw error;
      throw upstream("The GPU origin could not be reached", error);
    } finally {
      limits.clear();
    }
  }

  /** The origin's reason for refusing a request, for our own error's detail. */
  async function reason(response: Response): Promise<string> {
    const text = (await response.text().catch(() => "")).slice(0, 2000);
    try {
      const body = ErrorBody.parse(JSON.parse(text));
      const message = body.error ?? body.detail;
      if (message !== undefined) return message.slice(0, 300);
    } catch {
      // not a JSON error body: fall back to the text itself
    }
    return text.slice(0, 200) || `HTTP ${response.status}`;
  }

  async function verify(signal: AbortSignal | undefined): Promise<void> {
    const parsed = await call("", {}, signal, async (metadata) => {
      if (!metadata.ok)
        throw upstream(
          `The GPU origin does not serve ${model.name} ${model.version} ` +
            `(${metadata.status}: ${await reason(metadata)})`,
        );
      return MetadataResponse.safeParse(await metadata.json().catch(() => undefined));
    });
    if (!parsed.success)
      throw upstream(`The GPU origin sent invalid metadata for ${model.name}`, parsed.error);
    const mismatch =
      signatureMismatch(options.inputs, parsed.data.inputs) ??
      signatureMismatch(options.outputs, parsed.data.outputs);
    if (mismatch !== undefined) throw upstream(`The GPU origin's ${model.name} ${mismatch}`);
    const ready = await call("/ready", {}, signal, async (response) => {
      await response.body?.cancel();
      return response;
    });
    if (!ready.ok) throw upstream(`The GPU origin's ${model.name} is not ready (${ready.status})`);
  }

  function toTensor(output: z.infer<typeof WireTensor>): Tensor {
    const spec = options.outputs.find((declared) => declared.name === output.name);
    if (
      spec === undefined ||
      spec.datatype !== output.datatype ||
      !shapeMatches(spec.shape, output.shape)
    ) {
      throw upstream(
        `The GPU origin returned output "${output.name}" as ${output.datatype} ` +
          `[${output.shape.join(", ")}], not as the manifest declares`,
      );
    }
    try {
      return fromJsonTensor(output, `outputs.${output.name}`);
    } catch (error) {
      throw upstream(`The GPU origin returned invalid data for "${output.name}"`, error);
    }
  }

  /**
   * The origin failed in a way that says nothing about the input: check it again before trusting
   * it.
   */
  function forget<T extends ServiceError>(error: T): T {
    verified = undefined;
    return error;
  }

  return {
    kind: "origin",
    stillLoaded: () => verified !== undefined,
    async load() {
      if (verified === undefined) {
        // Verification is shared by every waiting request, so no one request's signal aborts it.
        const attempt = verify(undefined);
        // A failed check is not cached: the next request asks the origin again.
        attempt.catch(() => {
          if (verified === attempt) verified = undefined;
        });
        verified = attempt;
      }
      await verified;
    },
    tensors: {
      run: async (feeds, { outputNames, signal } = {}) => {
        checkFeeds(options.inputs, feeds);
        if (outputNames !== undefined) checkOutputNames(options.outputs, outputNames);
        const body = {
          inputs: Object.entries(feeds).map(([name, tensor]) => toJsonTensor(name, tensor)),
          ...(outputNames === undefined ? {} : { outputs: outputNames.map((name) => ({ name })) }),
        };
        const started = performance.now();
        const request = {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        };
        let parsed: ReturnType<typeof InferResponse.safeParse>;
        try {
          parsed = await call("/infer", request, signal, async (response) => {
            if (response.status === 400 || response.status === 422) {
              // The feeds matched the signature, so the origin refused their content: the caller's
              // input.
              throw new ServiceError(
                422,
                "unprocessable_input",
                `The model could not run on this input: ${await reason(response)}`,
                { field: "inputs" },
              );
            }
            if (response.status === 413) {
              throw new ServiceError(
                413,
                "payload_too_large",
                `The GPU origin refused a request this large: ${await reason(response)}`,
                { field: "inputs" },
              );
            }
            if (!response.ok)
              throw forget(
                upstream(`The GPU origin failed (${response.status}: ${await reason(response)})`),
              );
            return InferResponse.safeParse(await response.json().catch(() => undefined));
          });
        } catch (error) {
          throw error instanceof ServiceError && error.status >= 500 ? forget(error) : error;
        }
        if (!parsed.success)
          throw upstream(
            `The GPU origin sent an invalid inference response for ${model.name}`,
            parsed.error,
          );
        const runMs = performance.now() - started;
        const outputs = Object.fromEntries(
          parsed.data.outputs.map((output) => [output.name, toTensor(output)]),
        );
        const missing = (outputNames ?? options.outputs.map((spec) => spec.name)).find(
          (name) => outputs[name] === undefined,
        );
        if (missing !== undefined)
          throw upstream(`The GPU origin's response has no output "${missing}"`);
        return { outputs, timings: { runMs } } satisfies RunResult;
      },
    },
  };
}
