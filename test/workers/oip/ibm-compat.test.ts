// IBM's published GRU and LSTM fraud models run unchanged at the edge: registered with a
// manifest, read from R2, sha256-verified, run by the same WASM runtime, served over OIP,
// and equal to onnxruntime-node's outputs on the same input.
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { createApp } from "../../../src/app";
import { createRegistry } from "../../../src/models/registry";
import { r2Key } from "../../../src/models/store";
import { edgeRuntimes } from "../../../src/runtime";
import { createServices } from "../../../src/tasks";

const models = inject("ibmModels");

function manifestFor(model: (typeof models)[number]) {
  return {
    name: model.name,
    version: "1",
    description: "IBM ai-on-z-fraud-detection (Apache-2.0), unchanged",
    task: "raw",
    runtime: "wasm",
    graphs: {
      model: {
        file: "model.onnx",
        sha256: model.sha256,
        bytes: model.bytes,
        inputs: [{ name: "input", datatype: "FP32", shape: [7, 16, 220] }],
        outputs: [{ name: model.output, datatype: "FP32", shape: [7, 16, 1] }],
      },
    },
  };
}

describe.skipIf(models.length === 0)("IBM fraud models through the edge runtime", () => {
  it.each(models.map((model) => [model.name, model] as const))(
    "%s: OIP infer equals onnxruntime-node",
    async (_, model) => {
      const manifest = manifestFor(model);
      await env.MODELS.put(
        r2Key(manifest, manifest.graphs.model.file),
        Uint8Array.from(atob(model.base64), (c) => c.charCodeAt(0)),
      );
      const services = createServices(
        createRegistry([{ manifest }], { bucket: env.MODELS, runtimeFor: edgeRuntimes() }),
      );
      const app = createApp(() => services);
      const response = await app.request(
        `/v2/models/${model.name}/infer`,
        {
          method: "POST",
          headers: { authorization: "Bearer test-key-1", "content-type": "application/json" },
          body: JSON.stringify({
            inputs: [{ name: "input", shape: [7, 16, 220], datatype: "FP32", data: model.input }],
          }),
        },
        env,
      );
      expect(response.status).toBe(200);
      const body = await response.json<{
        outputs: { name: string; shape: number[]; data: number[] }[];
      }>();
      expect(body.outputs[0]).toMatchObject({ name: model.output, shape: [7, 16, 1] });
      const largest = Math.max(
        ...body.outputs[0]!.data.map((value, i) => Math.abs(value - model.native[i]!)),
      );
      // Native and WASM kernels accumulate in different orders: agreement to 1e-4, as for our own
      // models.
      expect(largest).toBeLessThan(1e-4);
    },
  );
});
