// The reference origin as a real process over loopback: Open Inference Protocol v2 on its
// tensor engine (onnxruntime-node) through the shared codec (JSON and Triton binary
// tensors, model config), problem+json errors with OIP's `error` member, Bearer auth, and
// the same sha256 integrity rule as the edge.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startOrigin } from "../../../scripts/lib/origin.mjs";

type OriginProcess = Awaited<ReturnType<typeof startOrigin>>;

const KEY = "origin-test-key";
/** Starting the origin (tsx, three models, sha256 checks) can take long on a loaded machine. */
const STARTUP_MS = 150_000;
const Reference = z.object({
  cases: z.array(z.object({ ids: z.array(z.number()), logits: z.array(z.array(z.number())) })),
});
const reference = Reference.parse(
  JSON.parse(readFileSync("test/fixtures/spam-classifier/reference.json", "utf8")),
);

const feeds = (ids: number[]) => ({
  id: "req-7",
  inputs: [
    { name: "input_ids", shape: [1, ids.length], datatype: "INT64", data: ids },
    { name: "attention_mask", shape: [1, ids.length], datatype: "INT64", data: ids.map(() => 1) },
  ],
});

describe("reference origin", () => {
  let origin: OriginProcess;
  const call = (path: string, init: RequestInit = {}, key: string | null = KEY) =>
    fetch(`${origin.url}${path}`, {
      ...init,
      headers: {
        "content-type": "application/json",
        ...(key === null ? {} : { authorization: `Bearer ${key}` }),
        ...init.headers,
      },
    });
  const infer = (body: unknown, model = "spam-classifier") =>
    call(`/v2/models/${model}/infer`, { method: "POST", body: JSON.stringify(body) });

  beforeAll(async () => {
    origin = await startOrigin({ ORIGIN_API_KEY: KEY });
  }, STARTUP_MS);
  afterAll(() => origin?.stop());

  it("is live and ready once every shipped model is verified and loaded", async () => {
    expect((await call("/v2/health/live")).status).toBe(200);
    const ready = await call("/v2/health/ready");
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true });
    for (const name of ["spam-classifier", "fraud-gru"])
      expect((await call(`/v2/models/${name}/ready`)).status).toBe(200);
  });

  it(
    "serves metadata and runs the INT8 graph " + "natively: the logits of the reference fixture",
    async () => {
      const metadata = await (await call("/v2/models/spam-classifier")).json();
      expect(metadata).toMatchObject({
        name: "spam-classifier",
        inputs: [{ name: "input_ids", datatype: "INT64" }, { name: "attention_mask" }],
      });
      for (const { ids, logits } of reference.cases.slice(0, 4)) {
        const response = await infer(feeds(ids));
        expect(response.status).toBe(200);
        const body = (await response.json()) as {
          id: string;
          outputs: { name: string; shape: number[]; data: number[] }[];
        };
        expect(body.id).toBe("req-7");
        expect(body.outputs[0]!.shape).toEqual([1, 2]);
        body.outputs[0]!.data.forEach((value, j) => expect(value).toBeCloseTo(logits[0]![j]!, 4));
      }
    },
  );

  it("answers bad requests with problem+json naming the field, never a 500", async () => {
    const cases: [Promise<Response>, number, string | undefined][] = [
      [call("/v2/models/spam-classifier/infer", { method: "POST", body: "{" }), 400, undefined],
      [infer({ inputs: [] }), 400, "inputs"],
      [infer(feeds([5, 6]), "no-such-model"), 404, "name"],
      [
        infer({
          inputs: [
            { ...feeds([5]).inputs[0], datatype: "FP32", data: [0.5] },
            feeds([5]).inputs[1],
          ],
        }),
        422,
        "inputs.input_ids.datatype",
      ],
      [infer(feeds([5, 8_000, 7])), 422, "inputs"],
    ];
    for (const [pending, status, field] of cases) {
      const response = await pending;
      expect(response.status).toBe(status);
      expect(response.headers.get("content-type")).toContain("application/problem+json");
      const problem = (await response.json()) as { status: number; field?: string; error: string };
      expect(problem.status).toBe(status);
      expect(problem.error).toBeTruthy();
      if (field !== undefined) expect(problem.field).toBe(field);
    }
  });

  it(
    "speaks Triton's extensions through the shared codec: " +
      "any Content-Type, binary tensors both ways, model config",
    async () => {
      const { ids, logits } = reference.cases[0]!;
      const asText = await call("/v2/models/spam-classifier/infer", {
        method: "POST",
        body: JSON.stringify(feeds(ids)),
        headers: { "content-type": "text/plain" },
      });
      expect(asText.status).toBe(200);
      const header = new TextEncoder().encode(
        JSON.stringify({
          inputs: [
            {
              name: "input_ids",
              shape: [1, ids.length],
              datatype: "INT64",
              parameters: { binary_data_size: ids.length * 8 },
            },
            {
              name: "attention_mask",
              shape: [1, ids.length],
              datatype: "INT64",
              data: ids.map(() => 1),
            },
          ],
          outputs: [{ name: "logits", parameters: { binary_data: true } }],
        }),
      );
      const body = new Uint8Array(header.byteLength + ids.length * 8);
      body.set(header);
      body.set(new Uint8Array(BigInt64Array.from(ids, BigInt).buffer), header.byteLength);
      const binary = await call("/v2/models/spam-classifier/infer", {
        method: "POST",
        body,
        headers: {
          "content-type": "application/octet-stream",
          "inference-header-content-length": String(header.byteLength),
        },
      });
      expect(binary.status).toBe(200);
      const length = Number(binary.headers.get("inference-header-content-length"));
      const bytes = new Uint8Array(await binary.arrayBuffer());
      const json = JSON.parse(new TextDecoder().decode(bytes.subarray(0, length))) as {
        outputs: { name: string; parameters: { binary_data_size: number } }[];
      };
      expect(json.outputs[0]!.parameters.binary_data_size).toBe(8);
      const values = new Float32Array(bytes.slice(length).buffer);
      values.forEach((value, j) => expect(value).toBeCloseTo(logits[0]![j]!, 4));
      const config = await (await call("/v2/models/spam-classifier/config")).json();
      expect(config).toMatchObject({
        name: "spam-classifier",
        platform: "onnxruntime_onnx",
        input: [{ name: "input_ids", data_type: "TYPE_INT64" }, { name: "attention_mask" }],
      });
    },
  );

  it("requires its Bearer key on model routes", async () => {
    expect((await call("/v2/models/spam-classifier", {}, null)).status).toBe(401);
    expect((await call("/v2/models/spam-classifier", {}, "wrong-key")).status).toBe(401);
    expect((await call("/v2/health/live", {}, null)).status).toBe(200);
  });
});

describe("reference origin, misconfigured", () => {
  it(
    "keeps a model whose file fails its sha256 not ready (503), the others ready",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "origin-models-"));
      try {
        cpSync("models", dir, { recursive: true });
        const file = join(dir, "spam-classifier", "model.int8.opt.onnx");
        const bytes = readFileSync(file);
        bytes[bytes.length - 1]! ^= 0xff;
        writeFileSync(file, bytes);
        const origin = await startOrigin({ ORIGIN_MODELS: dir });
        try {
          expect((await fetch(`${origin.url}/v2/health/ready`)).status).toBe(503);
          const health = await fetch(`${origin.url}/health`);
          expect(health.status).toBe(503);
          expect(await health.json()).toMatchObject({
            status: "degraded",
            failures: { "spam-classifier": expect.stringContaining("integrity") },
          });
          expect((await fetch(`${origin.url}/v2/models/spam-classifier/ready`)).status).toBe(503);
          expect((await fetch(`${origin.url}/v2/models/fraud-gru/ready`)).status).toBe(200);
          const response = await fetch(`${origin.url}/v2/models/spam-classifier/infer`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(feeds([5, 6])),
          });
          expect(response.status).toBe(503);
          expect(((await response.json()) as { error: string }).error).toContain("integrity");
        } finally {
          await origin.stop();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    STARTUP_MS,
  );

  it(
    "refuses to listen beyond loopback without an API key",
    async () => {
      await expect(startOrigin({ ORIGIN_HOST: "0.0.0.0" })).rejects.toThrow(
        /without ORIGIN_API_KEY/,
      );
    },
    STARTUP_MS,
  );
});
