// Outcome: the same interface, both places. digit-diffusion's manifest served twice with only
// `runtime` switched — the loop on the reference origin (onnxruntime-node, tensor-stream
// protocol) and in this isolate (onnxruntime-web WASM in workerd) — over the same FP32
// graphs, the same noise generator and the same scheduler code: for each scheduler the
// 28 × 28 PNGs agree to within one grey level per pixel (stated tolerance: max |Δ| ≤ 1/255;
// FP32 kernels of the two builds differ in the last bits, which rarely crosses a rounding
// boundary). No task or route code knows which ran.
import { describe, expect, inject, it } from "vitest";
import { wasmMemoryBytes } from "../../../../src/runtime/wasm/ort";
import {
  appInIsolate,
  appOnOrigin,
  call,
  fromBase64,
  pixels,
} from "../../../support/workers/images";

const origin = inject("imagesOrigin");

interface ImagesBody {
  data: { b64_json: string }[];
}

async function png(
  app: Awaited<ReturnType<typeof appInIsolate>>,
  request: Record<string, unknown>,
): Promise<Uint8Array> {
  const response = await call(app, "/v1/images/generations", request);
  expect(response.status).toBe(200);
  return fromBase64((await response.json<ImagesBody>()).data[0]!.b64_json);
}

describe.skipIf(origin === null)(
  "digit-diffusion: origin vs in-isolate WASM loop, same manifest, same graphs",
  () => {
    it("same seed → the same image within one grey level, for DDIM and Euler", {
      timeout: 300_000,
    }, async () => {
      const remote = appOnOrigin(origin?.url ?? "");
      const local = await appInIsolate(origin?.filesUrl ?? "");
      for (const [scheduler, seed] of [
        ["ddim", 7],
        ["euler", 8],
        ["ddim", 9],
      ] as const) {
        const request = {
          prompt: "a handwritten four",
          steps: 10,
          seed,
          scheduler,
          guidance_scale: 4,
        };
        const [a, b] = [pixels(await png(remote, request)), pixels(await png(local, request))];
        expect([b.width, b.height]).toEqual([a.width, a.height]);
        let worst = 0;
        let differing = 0;
        a.data.forEach((value, i) => {
          const delta = Math.abs(value - (b.data[i] ?? 0));
          worst = Math.max(worst, delta);
          if (delta > 0) differing += 1;
        });
        console.log(
          `parity ${scheduler} seed ${seed}: max |Δ| ${worst}/255, ` +
            `${differing} of ${a.data.length} pixels differ`,
        );
        expect(worst, `${scheduler} seed ${seed}`).toBeLessThanOrEqual(1);
      }
      // The pipeline's memory inside workerd: ORT's linear memory in this isolate with the three
      // graphs loaded and run (an upper bound: whatever else this isolate loaded shares it).
      const mb = wasmMemoryBytes() / 2 ** 20;
      console.log(
        `ORT WASM linear memory in this isolate with the pipeline loaded: ${mb.toFixed(1)} MB`,
      );
      expect(mb).toBeGreaterThan(0);
      expect(mb).toBeLessThanOrEqual(48);
    });
  },
);
