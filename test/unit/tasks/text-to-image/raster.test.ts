// The edge's image helpers for text-to-image, on hand-checkable inputs: previews through
// the manifest's linear factors (clamped), float → byte rounding, the nearest-neighbour
// upscale, which steps the partial images come from, and PNG bytes that decode back.
import { decode } from "fast-png";
import { describe, expect, it } from "vitest";
import { encodePng } from "../../../../src/images/png";
import { previewPixels, toBytes, upscale } from "../../../../src/tasks/text-to-image/raster";
import { previewSteps } from "../../../../src/tasks/text-to-image/text-to-image";

describe("text-to-image raster helpers", () => {
  it("preview pixel = bias + Σ_c factor_c · latent_c, clamped to [0, 1]", () => {
    // 2 channels of a 1 × 2 latent: channel 0 = [1, 10], channel 1 = [2, -10].
    const latent = Float32Array.of(1, 10, 2, -10);
    const pixels = previewPixels(latent, 2, 1, 2, [0.1, 0.2], 0.05);
    expect(pixels[0]).toBeCloseTo(0.05 + 0.1 + 0.4, 6);
    expect(pixels[1]).toBe(0); // 0.05 + 1 − 2 < 0
  });

  it("bytes round half up and clamp; the upscale repeats each pixel as a block", () => {
    expect([...toBytes(Float32Array.of(0, 0.5, 1, 1.5, -1, 0.2))]).toEqual([
      0, 128, 255, 255, 0, 51,
    ]);
    expect([...upscale(Uint8Array.of(1, 2, 3, 4), 2, 2, 4)]).toEqual([
      1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4,
    ]);
    const same = Uint8Array.of(9);
    expect(upscale(same, 1, 1, 1)).toBe(same);
  });

  it("partial images come from evenly spaced steps, never the last", () => {
    expect(previewSteps(20, 3)).toEqual([5, 10, 15]);
    expect(previewSteps(20, 1)).toEqual([10]);
    expect(previewSteps(20, 0)).toEqual([]);
    expect(previewSteps(2, 3)).toEqual([1]);
    expect(previewSteps(1, 2)).toEqual([]);
  });

  it("a grayscale PNG decodes back to its pixels", () => {
    const gray = Uint8Array.from({ length: 28 * 28 }, (_, i) => i % 256);
    const image = decode(encodePng(gray, 28, 28));
    expect([image.width, image.height, image.channels, image.depth]).toEqual([28, 28, 1, 8]);
    expect([...image.data]).toEqual([...gray]);
  });
});
