// src/images without workerd: header checks that refuse before allocating, grayscale, and the
// MNIST-style preprocessing (polarity, fit into 20x20, centre of mass at the centre).
import { describe, expect, it } from "vitest";
import { encode as encodeJpeg } from "jpeg-js";
import { decodeImage } from "../../../src/images/decode";
import { ImageError } from "../../../src/images/image-error";
import { readJpegSize } from "../../../src/images/jpeg-header";
import { DEFAULT_IMAGE_LIMITS } from "../../../src/images/limits";
import { MNIST_SIZE, mnistPixels, toInk } from "../../../src/images/mnist-preprocess";
import { encodePng } from "../../../src/images/png";
import { chunk, ihdr, pngFile, zlib } from "../../support/png-craft";

/** A 3-pixel-wide vertical stroke, 12 tall, with its top-left at (x, y) in a w×h ink plane. */
function stroke(w: number, h: number, x: number, y: number): Float32Array {
  const ink = new Float32Array(w * h);
  for (let dy = 0; dy < 12; dy++) for (let dx = 0; dx < 3; dx++) ink[(y + dy) * w + x + dx] = 1;
  return ink;
}

function centreOfMass(plane: Float32Array, size: number) {
  let mass = 0,
    sx = 0,
    sy = 0;
  plane.forEach((v, i) => {
    mass += v;
    sx += v * ((i % size) + 0.5);
    sy += v * (Math.floor(i / size) + 0.5);
  });
  return { x: sx / mass, y: sy / mass, mass };
}

describe("decodeImage", () => {
  it("refuses a PNG declaring 50,000 x 50,000 from its IHDR, before any inflating", async () => {
    const bomb = pngFile(ihdr(50_000, 50_000), chunk("IDAT", await zlib(new Uint8Array(10))));
    const error = await decodeImage(bomb).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImageError);
    expect(error).toMatchObject({ kind: "too_large" });
  });

  it("refuses a JPEG frame over the limits from its SOF marker", () => {
    const sof = new Uint8Array([
      0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x13, 0x88, 0x13, 0x88, 0x01,
    ]);
    expect(() => readJpegSize(sof, DEFAULT_IMAGE_LIMITS)).toThrow(/5000x5000/);
  });

  it("decodes gray PNG and JPEG to luminance in [0, 1]", async () => {
    const gray = Uint8Array.from({ length: 16 * 8 }, (_, i) => (i % 16) * 16);
    const png = await decodeImage(encodePng(gray, 16, 8));
    expect(png).toMatchObject({ format: "png", width: 16, height: 8 });
    expect(png.luma[15]).toBeCloseTo(240 / 255, 5);
    const rgba = new Uint8Array(32 * 32 * 4).fill(200);
    const jpeg = await decodeImage(
      new Uint8Array(encodeJpeg({ data: rgba, width: 32, height: 32 }, 95).data),
    );
    expect(jpeg).toMatchObject({ format: "jpeg", width: 32, height: 32 });
    expect(jpeg.luma[100]).toBeCloseTo(200 / 255, 1);
  });

  it("says unsupported for unknown bytes, corrupt when they were declared an image", async () => {
    await expect(decodeImage(new Uint8Array([1, 2, 3, 4]))).rejects.toMatchObject({
      kind: "unsupported",
    });
    await expect(
      decodeImage(new Uint8Array([1, 2, 3, 4]), DEFAULT_IMAGE_LIMITS, true),
    ).rejects.toMatchObject({ kind: "corrupt" });
  });
});

describe("mnistPixels", () => {
  it("takes a 28x28 ink image as it is", () => {
    const ink = stroke(28, 28, 12, 8);
    expect(mnistPixels(ink, 28, 28)).toEqual(ink);
  });

  it("inverts dark ink on light paper and removes the paper's grey", () => {
    const luma = stroke(28, 28, 12, 8).map((v) => 0.8 - 0.7 * v);
    const ink = toInk(luma, 28, 28);
    expect(ink[0]).toBe(0);
    // ink at 0.1 on 0.8 paper: (0.9 - 0.2) / (1 - 0.2)
    expect(ink[8 * 28 + 13]).toBeCloseTo(0.875, 5);
  });

  it("fits a large off-centre digit into 20x20 and centres it by mass", () => {
    const w = 120,
      h = 90;
    const ink = new Float32Array(w * h);
    // A 60-tall, 15-wide stroke near the top-left corner.
    for (let y = 5; y < 65; y++) for (let x = 10; x < 25; x++) ink[y * w + x] = 1;
    const out = mnistPixels(ink, w, h);
    expect(out).toHaveLength(MNIST_SIZE * MNIST_SIZE);
    const rows = Array.from({ length: 28 }, (_, y) =>
      out.slice(y * 28, y * 28 + 28).some((v) => v > 0.1),
    );
    expect(rows.filter(Boolean).length).toBeGreaterThanOrEqual(19);
    expect(rows.filter(Boolean).length).toBeLessThanOrEqual(21);
    const centre = centreOfMass(out, 28);
    expect(Math.abs(centre.x - 14)).toBeLessThanOrEqual(0.6);
    expect(Math.abs(centre.y - 14)).toBeLessThanOrEqual(0.6);
  });

  it("gives an all-zero plane for a blank image", () => {
    expect(mnistPixels(new Float32Array(50 * 50).fill(1), 50, 50).every((v) => v === 0)).toBe(true);
  });
});
