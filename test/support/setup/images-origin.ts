// Global setup (Node side) for the image-generation tests: the reference origin as a real
// process on loopback serving only models/digit-diffusion (its own /metrics, so the
// disconnect test reads this model's counters alone), and a small file server that hands
// the pipeline's graphs to the in-isolate tests (they put them into local R2). Without
// models/digit-diffusion (it arrives with the diffusion-model branch) the tests are skipped.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { TestProject } from "vitest/node";
import { startOrigin } from "../../../scripts/lib/origin.mjs";

const MODEL = "models/digit-diffusion";

declare module "vitest" {
  export interface ProvidedContext {
    /** url: the origin; filesUrl: GET /<file> → a file of models/digit-diffusion; POST
     * {filesUrl}/busy/… answers 429 with Retry-After, {filesUrl}/fail-mid-stream/… streams five
     * steps' latents, then an error event and [DONE] (as an origin failing mid-loop does). */
    imagesOrigin: { url: string; filesUrl: string } | null;
  }
}

export default async function setup(
  project: TestProject,
): Promise<(() => Promise<void>) | undefined> {
  if (!existsSync(join(MODEL, "manifest.json"))) {
    project.provide("imagesOrigin", null);
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), "images-origin-"));
  cpSync(MODEL, join(dir, "digit-diffusion"), { recursive: true });
  const origin = await startOrigin({ ORIGIN_MODELS: dir });
  const files = createServer((request, response) => {
    if (request.method === "POST") {
      request.resume();
      if (request.url?.startsWith("/busy/"))
        return response
          .writeHead(429, { "content-type": "application/json", "retry-after": "7" })
          .end('{"error":"the diffusion engine is full"}');
      response.writeHead(200, { "content-type": "text/event-stream" });
      const latent = {
        name: "latent",
        datatype: "FP32",
        shape: [1, 4, 7, 7],
        data: new Array<number>(196).fill(0.5),
      };
      for (let step = 1; step <= 5; step += 1)
        response.write(`data: ${JSON.stringify({ step, final: false, outputs: [latent] })}\n\n`);
      response.end(
        "data: " +
          `${JSON.stringify({ error: { message: "CUDA out of memory", code: "internal_error", status: 500 } })}` +
          "\n\ndata: [DONE]\n\n",
      );
      return;
    }
    const file = join(MODEL, basename(request.url ?? "/"));
    if (!existsSync(file)) return response.writeHead(404).end();
    response.writeHead(200, { "content-type": "application/octet-stream" }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  const address = files.address();
  if (address === null || typeof address === "string") throw new Error("file server has no port");
  project.provide("imagesOrigin", {
    url: origin.url,
    filesUrl: `http://127.0.0.1:${address.port}`,
  });
  return async () => {
    files.close();
    await origin.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
