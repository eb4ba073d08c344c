// Image classification end to end inside workerd: PNG/JPEG decoding, MNIST-style
// preprocessing, the INT8 digit classifier in WASM, and all three request shapes plus Workers AI's.
import { describe, expect, it } from "vitest";
import manifestJson from "../../../models/digit-classifier/manifest.json";
import { ImageClassificationSchema } from "../../../src/models/manifest";
import { post } from "../../support/workers/helpers";
import {
  dataUrl,
  fixture,
  jpegOf,
  paperDigit,
  pngOf,
  postBytes,
  postForm,
} from "../../support/workers/image-classify";

const manifest = ImageClassificationSchema.parse(manifestJson);

interface ImageClassifyBody {
  model: string;
  model_version: string;
  results: {
    labels: { label: string; score: number }[];
    image: { format: string; width: number; height: number };
  }[];
}

const top = (body: ImageClassifyBody, i = 0) => body.results[i]!.labels[0]!.label;

describe("POST /v1/classify with images", () => {
  it("takes a raw PNG body with ?model= and returns every label, best first", async () => {
    const response = await postBytes("/v1/classify?model=digit-classifier", pngOf(0), "image/png");
    expect(response.status).toBe(200);
    const body = await response.json<ImageClassifyBody>();
    expect(body.model).toBe("digit-classifier");
    expect(body.results).toHaveLength(1);
    expect(body.results[0]!.image).toEqual({ format: "png", width: 28, height: 28 });
    const labels = body.results[0]!.labels;
    expect(labels.map((entry) => entry.label).sort()).toEqual([
      "0",
      "1",
      "2",
      "3",
      "4",
      "5",
      "6",
      "7",
      "8",
      "9",
    ]);
    expect(labels.reduce((sum, entry) => sum + entry.score, 0)).toBeCloseTo(1, 5);
    expect(top(body)).toBe(String(fixture.int8Predictions[0]));
    expect(response.headers.get("server-timing")).toMatch(
      /decode;dur=.*preprocess;dur=.*infer;dur=/,
    );
  });

  it(
    "takes a raw JPEG of dark ink on white paper, " +
      "bigger than 28x28 (inverted, fitted, centred)",
    async () => {
      const picks = [3, 25, 47, 61, 88, 104, 127, 149, 166, 190];
      let correct = 0;
      for (const k of picks) {
        const { gray, width, height } = paperDigit(k);
        const response = await postBytes(
          `/v1/classify?model=digit-classifier&top_k=1`,
          jpegOf(gray, width, height),
          "image/jpeg",
        );
        expect(response.status).toBe(200);
        const body = await response.json<ImageClassifyBody>();
        expect(body.results[0]!.image).toEqual({ format: "jpeg", width, height });
        expect(body.results[0]!.labels).toHaveLength(1);
        if (top(body) === String(fixture.labels[k])) correct++;
      }
      expect(correct).toBeGreaterThanOrEqual(9);
    },
  );

  it("takes a multipart form with a file part and a model field", async () => {
    const form = new FormData();
    form.append("model", "digit-classifier");
    form.append("top_k", "3");
    form.append("file", new File([pngOf(41)], "digit.png", { type: "image/png" }));
    const response = await postForm("/v1/classify", form);
    expect(response.status).toBe(200);
    const body = await response.json<ImageClassifyBody>();
    expect(body.results[0]!.labels).toHaveLength(3);
    expect(top(body)).toBe(String(fixture.int8Predictions[41]));
  });

  it("takes JSON data URLs as input (a batch) or image", async () => {
    const batch = await post("/v1/classify", {
      model: "digit-classifier",
      input: [dataUrl("image/png", pngOf(5)), dataUrl("image/png", pngOf(77))],
    });
    expect(batch.status).toBe(200);
    const body = await batch.json<ImageClassifyBody>();
    expect([top(body, 0), top(body, 1)]).toEqual([
      String(fixture.int8Predictions[5]),
      String(fixture.int8Predictions[77]),
    ]);
    const one = await post("/v1/classify", {
      model: "digit-classifier",
      image: dataUrl("image/png", pngOf(77)),
    });
    expect(top(await one.json<ImageClassifyBody>())).toBe(String(fixture.int8Predictions[77]));
  });

  it(
    "matches onnxruntime-node's INT8 predictions and " +
      "the manifest's accuracy on 200 held-out digits",
    async () => {
      const predictions: number[] = [];
      for (let start = 0; start < fixture.labels.length; start += 50) {
        const input = Array.from({ length: Math.min(50, fixture.labels.length - start) }, (_, i) =>
          dataUrl("image/png", pngOf(start + i)),
        );
        const response = await post("/v1/classify", { model: "digit-classifier", input, top_k: 1 });
        expect(response.status).toBe(200);
        const body = await response.json<ImageClassifyBody>();
        predictions.push(...body.results.map((result) => Number(result.labels[0]!.label)));
      }
      const agree = predictions.filter((p, i) => p === fixture.int8Predictions[i]).length;
      const correct = predictions.filter((p, i) => p === fixture.labels[i]).length;
      expect(agree).toBeGreaterThanOrEqual(fixture.labels.length - 1);
      expect(Math.abs(correct / fixture.labels.length - fixture.int8Accuracy)).toBeLessThanOrEqual(
        0.005,
      );
      // The subset's accuracy is within sampling error of the whole held-out set's.
      expect(correct / fixture.labels.length).toBeGreaterThanOrEqual(
        manifest.evaluation.int8.accuracy - 0.02,
      );
    },
  );
});

describe("POST /v1/run/{model} with {image} (Workers AI shape)", () => {
  it("returns [{label, score}] for the image's bytes as numbers", async () => {
    const response = await post("/v1/run/digit-classifier", { image: Array.from(pngOf(120)) });
    expect(response.status).toBe(200);
    const labels = await response.json<{ label: string; score: number }[]>();
    expect(labels).toHaveLength(10);
    expect(labels[0]!.label).toBe(String(fixture.int8Predictions[120]));
    expect(labels[0]!.score).toBeGreaterThanOrEqual(labels[1]!.score);
  });
});
