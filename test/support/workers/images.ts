// Apps for the image-generation tests: the shipped digit-diffusion manifest with its runtime
// switched — on the reference origin over the tensor-stream protocol, or the in-isolate
// loop over onnxruntime-web with the graphs read from local R2 — nothing else changed.
import { env } from "cloudflare:test";
import { decode } from "fast-png";
import { createApp } from "../../../src/app";
import { bundledModels } from "../../../src/models/bundled";
import { TextToImageSchema } from "../../../src/models/manifest";
import { createRegistry } from "../../../src/models/registry";
import { r2Key } from "../../../src/models/store";
import { edgeRuntimes, type OriginConfig } from "../../../src/runtime";
import { createServices } from "../../../src/tasks";
import { KEY } from "./helpers";

const shipped = bundledModels.find((entry) => TextToImageSchema.safeParse(entry.manifest).success);
export const diffusion =
  shipped === undefined ? undefined : TextToImageSchema.parse(shipped.manifest);
const files = shipped?.files ?? {};

function manifestOf() {
  if (diffusion === undefined) throw new Error("digit-diffusion ships in the bundle");
  return diffusion;
}

/** digit-diffusion on the tensor-stream origin at `url`. */
export function appOnOrigin(url: string, origin: Partial<OriginConfig> = {}) {
  const manifest = { ...manifestOf(), runtime: "origin", protocol: "tensor-stream" };
  const registry = createRegistry([{ manifest, files }], {
    runtimeFor: edgeRuntimes({ url, apiKey: undefined, timeoutMs: 10_000, ...origin }),
  });
  return createApp(() => createServices(registry));
}

/**
 * The same manifest with the loop in this isolate; its graphs come from R2 (put there from the file
 * server).
 */
export async function appInIsolate(filesUrl: string) {
  const manifest = manifestOf();
  for (const graph of Object.values(manifest.graphs)) {
    const key = r2Key(manifest, graph.file);
    if ((await env.MODELS.head(key)) === null)
      await env.MODELS.put(key, await (await fetch(`${filesUrl}/${graph.file}`)).arrayBuffer());
  }
  const registry = createRegistry([{ manifest: { ...manifest, runtime: "wasm" }, files }], {
    bucket: env.MODELS,
    runtimeFor: edgeRuntimes(),
  });
  return createApp(() => createServices(registry));
}

export type App = ReturnType<typeof createApp>;

export function call(
  app: App,
  path: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<Response> {
  return Promise.resolve(
    app.request(
      `https://edge.test${path}`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      },
      env,
    ),
  );
}

export function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

/** A grayscale PNG's size and pixels. */
export function pixels(png: Uint8Array): {
  width: number;
  height: number;
  channels: number;
  data: Uint8Array;
} {
  const image = decode(png);
  return {
    width: image.width,
    height: image.height,
    channels: image.channels,
    data: Uint8Array.from(image.data),
  };
}

/** SSE frames as {event, data}. */
export async function frames(
  response: Response,
): Promise<Array<{ event: string | undefined; data: string }>> {
  return (await response.text())
    .split("\n\n")
    .filter(Boolean)
    .map((frame) => {
      const lines = frame.split("\n");
      const event = lines.find((line) => line.startsWith("event: "))?.slice(7);
      const data = lines
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .join("\n");
      return { event, data };
    });
}

/** The origin's diffusion counters (its /metrics). */
export async function originCounters(
  url: string,
): Promise<{ imageSteps: number; aborted: number; running: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (pattern: RegExp) =>
    [...text.matchAll(pattern)].reduce((total, match) => total + Number(match[1]), 0);
  return {
    imageSteps: sum(/^origin_diffusion_image_steps_total\{[^}]*\} (\S+)$/gm),
    aborted: sum(/^origin_diffusion_requests_total\{[^}]*outcome="aborted"[^}]*\} (\S+)$/gm),
    running: sum(/^origin_diffusion_requests_running\{[^}]*\} (\S+)$/gm),
  };
}
