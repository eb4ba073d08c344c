// The tensor capability over a GPU origin that speaks the Open Inference Protocol v2 (Triton,
// KServe, or the reference origin in origin/).
import { z } from "zod";
import { ServiceError } from "../../errors/service-error";
import { fromJsonTensor, toJsonTensor } from "../../protocols/oip-tensors";
import { checkFeeds, checkOutputNames } from "../feeds";
import type { InferenceRuntime, RunResult } from "../runtime";
import { createBreakers } from "./circuit-breaker";
import { deadlines } from "./deadlines";
import { replicasOf, type OriginConfig } from "./origin-config";
import { createFleet, type Fleet } from "./replica-pool";
import { originTraceHeaders } from "./trace-context";
import { DataTypeSchema, shapeMatches, type Tensor, type TensorSpec } from "../../tensors/tensor";

export interface OriginRuntimeOptions {
  model: { name: string; version: string };
  inputs: readonly TensorSpec[];
  outputs: readonly TensorSpec[];
  origin: OriginConfig;
  /** What it knows of the replicas it calls (default: its own). */
  fleet?: Fleet;
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
 * A runtime whose model runs on the origin named by ORIGIN_URL, or on a pool of replicas: each
 * replica's metadata is checked before it serves, each call goes to the least loaded ready one,
 * and one that fails (5xx, unreachable, too slow) passes the call to the next.
 *
 * Feeds are checked here first, so the origin only ever sees well-formed tensors; whatever the
 * origin does wrong is a 5xx of ours, never a client's 4xx, and never an unexplained 500.
 */
export function createOipRuntime(options: OriginRuntimeOptions): InferenceRuntime {
  const { model, origin } = options;
  const fleet = options.fleet ?? createFleet({ breakers: createBreakers() });
  /** Each replica's check, shared by the requests waiting for it; a failed one is dropped. */
  const verified = new Map<string, Promise<void>>();

  const base = (url: string): string =>
    `${url}/v2/models/${encodeURIComponent(model.name)}` +
    `/versions/${encodeURIComponent(model.version)}`;

  /** One call; `response.text()`/`json()` must be read before the returned promise's
   * deadline is cleared, so callers read the body inside `read`. */
  async function call<T>(
    replica: string,
    path: string,
    init: RequestInit,
    signal: AbortSignal | undefined,
    read: (response: Response) => Promise<T>,
  ): Promise<T> {
    const url = `${base(replica)}${path}`;
    const headers = new Headers({ ...originTraceHeaders() });
    new Headers(init.headers).forEach((value, name) => headers.set(name, value));
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

  async function verify(replica: string): Promise<void> {
    const parsed = await call(replica, "", {}, undefined, async (metadata) => {
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
    const ready = await call(replica, "/ready", {}, undefined, async (response) => {
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

  /** Verifies `replica` once for every request that waits on it (no request's signal aborts it). */
  function verifyAt(replica: string): Promise<void> {
    let attempt = verified.get(replica);
    if (attempt === undefined) {
      attempt = verify(replica);
      const kept = attempt;
      // A failed check is not cached: the next request asks the origin again.
      kept.catch(() => {
        if (verified.get(replica) === kept) verified.delete(replica);
      });
      verified.set(replica, kept);
    }
    return attempt;
  }

  /** A failure that says nothing about the input: the replica is checked again before use. */
  const forgetting = (replica: string) => (error: unknown) => {
    if (error instanceof ServiceError && error.status >= 500) verified.delete(replica);
    throw error;
  };

  /** One inference on one replica; its failures drop the replica's check (forgetting). */
  async function infer(
    replica: string,
    request: RequestInit,
    signal: AbortSignal | undefined,
    outputNames: readonly string[] | undefined,
  ): Promise<RunResult> {
    const started = performance.now();
    const parsed = await call(replica, "/infer", request, signal, async (response) => {
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
        throw upstream(`The GPU origin failed (${response.status}: ${await reason(response)})`);
      return InferResponse.safeParse(await response.json().catch(() => undefined));
    }).catch(forgetting(replica));
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
  }

  return {
    kind: "origin",
    stillLoaded: () => verified.size > 0,
    async load() {
      const pool = replicasOf(origin, model.name);
      if (pool.length === 1) return await verifyAt(pool[0]!.url);
      // Ready once any replica is: the others are checked when a call first turns to them.
      await Promise.any(pool.map((replica) => verifyAt(replica.url))).catch(
        (failed: AggregateError) => {
          throw failed.errors[0];
        },
      );
    },
    tensors: {
      run: async (feeds, { outputNames, signal } = {}) => {
        checkFeeds(options.inputs, feeds);
        if (outputNames !== undefined) checkOutputNames(options.outputs, outputNames);
        const body = {
          inputs: Object.entries(feeds).map(([name, tensor]) => toJsonTensor(name, tensor)),
          ...(outputNames === undefined ? {} : { outputs: outputNames.map((name) => ({ name })) }),
        };
        const request = {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        };
        const pool = replicasOf(origin, model.name);
        const order = fleet.choose(pool, undefined, "/v2/health/ready");
        let lastError: unknown;
        for (const replica of order) {
          signal?.throwIfAborted();
          const lease = fleet.lease(replica);
          try {
            if (order.length > 1) await verifyAt(replica);
            return await infer(replica, request, signal, outputNames);
          } catch (error) {
            // One origin: its error as it is. A pool: the next replica, unless the input is at
            // fault or the caller left.
            if (order.length === 1 || signal?.aborted) throw error;
            if (!(error instanceof ServiceError) || error.status < 500) throw error;
            lastError = error;
          } finally {
            lease.release();
          }
        }
        throw lastError;
      },
    },
  };
}
