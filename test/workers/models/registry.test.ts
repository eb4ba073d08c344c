// Models read from R2 instead of the bundle: verified by sha256 before a session exists.
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import { bundledModels } from "../../../src/models/bundled";
import { TextClassificationSchema } from "../../../src/models/manifest";
import { createRegistry } from "../../../src/models/registry";
import { r2Key } from "../../../src/models/store";
import { edgeRuntimes } from "../../../src/runtime";
import { createServices } from "../../../src/tasks";

const [shipped] = bundledModels;
if (shipped?.files === undefined) throw new Error("the spam classifier ships in the bundle");
const files = shipped.files;
const manifest = TextClassificationSchema.parse(shipped.manifest);

/** A fresh app whose only model is the spam classifier, read from R2. */
function appReadingR2() {
  const services = createServices(
    createRegistry([{ manifest: shipped!.manifest }], {
      bucket: env.MODELS,
      runtimeFor: edgeRuntimes(),
    }),
  );
  return createApp(() => services);
}

async function upload(file: string, bytes: ArrayBuffer): Promise<void> {
  await env.MODELS.put(r2Key(manifest, file), bytes);
}

const request = (path: string, init: RequestInit = {}) =>
  new Request(`https://edge.test${path}`, {
    ...init,
    headers: { authorization: "Bearer test-key-1", "content-type": "application/json" },
  });

describe("models stored in R2", () => {
  beforeEach(async () => {
    await env.MODELS.delete([
      r2Key(manifest, manifest.graphs.model!.file),
      r2Key(manifest, manifest.tokenizer.file),
    ]);
  });

  it("load, verify and serve when the bytes match the manifest", async () => {
    await upload(manifest.graphs.model!.file, files[manifest.graphs.model!.file]!);
    await upload(manifest.tokenizer.file, files[manifest.tokenizer.file]!);
    const app = appReadingR2();
    expect((await app.request(request("/v2/health/ready"), {}, env)).status).toBe(200);
    const response = await app.request(
      request("/v1/classify", {
        method: "POST",
        body: JSON.stringify({ model: manifest.name, input: "hello" }),
      }),
      {},
      env,
    );
    expect(response.status).toBe(200);
  });

  it("are not ready when a file's sha256 differs, and refuse inference with 503", async () => {
    const tampered = new Uint8Array(files[manifest.graphs.model!.file]!.slice(0));
    tampered[tampered.length - 1]! ^= 0xff;
    await upload(manifest.graphs.model!.file, tampered.buffer);
    await upload(manifest.tokenizer.file, files[manifest.tokenizer.file]!);
    const app = appReadingR2();
    const ready = await app.request(request(`/v2/models/${manifest.name}/ready`), {}, env);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      name: manifest.name,
      ready: false,
      error: expect.any(String),
    });
    expect((await app.request(request("/v2/health/ready"), {}, env)).status).toBe(503);

    const response = await app.request(
      request("/v1/classify", {
        method: "POST",
        body: JSON.stringify({ model: manifest.name, input: "hello" }),
      }),
      {},
      env,
    );
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({
      code: "model_not_ready",
      detail: expect.stringMatching(/integrity/),
    });
  });

  it("are not ready while a file is missing, and recover once it is uploaded", async () => {
    await upload(manifest.graphs.model!.file, files[manifest.graphs.model!.file]!);
    const app = appReadingR2();
    expect((await app.request(request(`/v2/models/${manifest.name}/ready`), {}, env)).status).toBe(
      503,
    );
    await upload(manifest.tokenizer.file, files[manifest.tokenizer.file]!);
    expect((await app.request(request(`/v2/models/${manifest.name}/ready`), {}, env)).status).toBe(
      200,
    );
  });
});
