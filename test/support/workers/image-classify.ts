// Held-out digits for the image tests (test/fixtures/digit-classifier/held-out.json, written by
// scripts/digits/evaluate.mjs) and the ways a client sends them: PNG, JPEG, data URL, form.
import { decode as decodePng } from "fast-png";
import { encode as encodeJpeg } from "jpeg-js";
import heldOut from "../../fixtures/digit-classifier/held-out.json";
import { encodePng } from "../../../src/images/png";
import { BASE, KEY } from "./helpers";
import { SELF } from "cloudflare:test";
import { z } from "zod";

const Fixture = z.object({
  columns: z.number().int().positive(),
  labels: z.array(z.number().int()),
  int8Predictions: z.array(z.number().int()),
  int8Accuracy: z.number(),
  sheetPng: z.string(),
});

export const fixture = Fixture.parse(heldOut);

function base64ToBytes(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

const sheet = decodePng(base64ToBytes(fixture.sheetPng));

/** The k-th fixture digit as 28×28 8-bit gray, ink = 255 (MNIST's convention). */
export function digit(k: number): Uint8Array {
  const out = new Uint8Array(28 * 28);
  const top = Math.floor(k / fixture.columns) * 28;
  const left = (k % fixture.columns) * 28;
  for (let y = 0; y < 28; y++)
    for (let x = 0; x < 28; x++)
      out[y * 28 + x] = sheet.data[(top + y) * sheet.width + left + x] ?? 0;
  return out;
}

/** A digit as a photo of paper would show it: dark ink on white, scaled up, in a larger margin. */
export function paperDigit(
  k: number,
  scale = 3,
  margin = 17,
): { gray: Uint8Array; width: number; height: number } {
  const ink = digit(k);
  const width = 28 * scale + 2 * margin;
  const height = 28 * scale + margin;
  const gray = new Uint8Array(width * height).fill(250);
  for (let y = 0; y < 28 * scale; y++) {
    for (let x = 0; x < 28 * scale; x++)
      gray[(y + Math.floor(margin / 2)) * width + x + margin] =
        250 - Math.round((ink[Math.floor(y / scale) * 28 + Math.floor(x / scale)] ?? 0) * 0.9);
  }
  return { gray, width, height };
}

export function pngOf(k: number): Uint8Array {
  return encodePng(digit(k), 28, 28);
}

export function jpegOf(gray: Uint8Array, width: number, height: number, quality = 92): Uint8Array {
  const rgba = new Uint8Array(width * height * 4);
  gray.forEach((value, i) => rgba.set([value, value, value, 255], i * 4));
  return new Uint8Array(encodeJpeg({ data: rgba, width, height }, quality).data);
}

export function dataUrl(type: string, bytes: Uint8Array): string {
  return `data:${type};base64,${bytesToBase64(bytes)}`;
}

export function postBytes(path: string, body: BodyInit, type: string): Promise<Response> {
  return SELF.fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": type },
    body,
  });
}

export function postForm(path: string, form: FormData): Promise<Response> {
  return SELF.fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}` },
    body: form,
  });
}
