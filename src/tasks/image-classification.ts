// Image classification: decode and preprocess at the edge (src/images/) → one run of the
// model on a [n, 1, H, W] batch → softmax and top-k. `classifyPixels` skips the decoding for
// callers that already hold model-ready planes (the diffusion closed loop).
import { ServiceError } from "../errors/service-error";
import { decodeImage, type ImageFormat } from "../images/decode";
import { ImageError } from "../images/image-error";
import { DEFAULT_IMAGE_LIMITS, type ImageLimits } from "../images/limits";
import { mnistPixels } from "../images/mnist-preprocess";
import type { ImageClassificationManifest } from "../models/manifest";
import type { RegisteredModel } from "./registered-model";
import { rows, softmax, topK, type LabelScore } from "./postprocess";
import { tensorGraph } from "./tensor-graph";

/** An image as the request carried it. `declaredImage`: the request said it is an image
 * (Content-Type, data URL), so bytes of no known format are a broken image (422), not an
 * unsupported type (415). */
export interface EncodedImage {
  bytes: Uint8Array;
  declaredImage: boolean;
}

export interface ImageClassification {
  labels: LabelScore[];
  /** The decoded image's format and size. */
  image: { format: ImageFormat; width: number; height: number };
}

export interface ImageClassificationResult {
  results: ImageClassification[];
  timings: { decodeMs: number; preprocessMs: number; inferMs: number; postprocessMs: number };
}

export interface ImageClassifier {
  readonly manifest: ImageClassificationManifest;
  load(): Promise<void>;
  /** Encoded images (PNG or JPEG bytes); `fieldOf` names an image's request field in errors. */
  classify(
    images: readonly EncodedImage[],
    k: number,
    fieldOf: (index: number) => string,
    signal?: AbortSignal,
  ): Promise<ImageClassificationResult>;
  /** Model-ready planes (width × height values in [0, 1], ink = 1), one run for all of them. */
  classifyPixels(
    planes: readonly Float32Array[],
    k: number,
    signal?: AbortSignal,
  ): Promise<Array<{ labels: LabelScore[] }>>;
}

/** The problem an ImageError is to a client: too big → 413, not an image → 415, broken → 422. */
export function imageProblem(error: ImageError, field: string): ServiceError {
  switch (error.kind) {
    case "too_large":
      return new ServiceError(413, "payload_too_large", error.message, { field, cause: error });
    case "unsupported":
      return new ServiceError(415, "unsupported_media_type", error.message, {
        field,
        cause: error,
      });
    case "corrupt":
      return new ServiceError(422, "invalid_image", error.message, { field, cause: error });
    default: {
      const unknown: never = error.kind;
      throw new Error(`unknown image error ${String(unknown)}`);
    }
  }
}

export function createImageClassifier(
  model: RegisteredModel & { manifest: ImageClassificationManifest },
  limits: ImageLimits = DEFAULT_IMAGE_LIMITS,
): ImageClassifier {
  const { manifest, runtime } = model;
  const { graph, tensors } = tensorGraph(model);
  const [input] = graph.inputs;
  const [logitsSpec] = graph.outputs;
  if (input === undefined || logitsSpec === undefined)
    throw new Error(`Model ${manifest.name} declares no input or output`);
  const { width, height } = manifest.image;
  const planeSize = width * height;

  async function run(planes: readonly Float32Array[], k: number, signal?: AbortSignal) {
    const data = new Float32Array(planes.length * planeSize);
    planes.forEach((plane, i) => data.set(plane.subarray(0, planeSize), i * planeSize));
    const { outputs, timings } = await tensors.run(
      { [input!.name]: { datatype: "FP32", shape: [planes.length, 1, height, width], data } },
      { outputNames: [logitsSpec!.name], signal },
    );
    const started = performance.now();
    const logits = outputs[logitsSpec!.name];
    if (logits === undefined || !(logits.data instanceof Float32Array)) {
      throw new ServiceError(
        502,
        "upstream_error",
        `Model ${manifest.name} returned no FP32 ${logitsSpec!.name}`,
      );
    }
    const labels = rows(logits.data, manifest.labels.length).map((row) =>
      topK(softmax(row), manifest.labels, k),
    );
    return { labels, inferMs: timings.runMs, postprocessMs: performance.now() - started };
  }

  return {
    manifest,
    load: () => runtime.load(),
    async classify(images, k, fieldOf, signal) {
      await runtime.load();
      let decodeMs = 0;
      let preprocessMs = 0;
      const planes: Float32Array[] = [];
      const decoded: Array<{ format: ImageFormat; width: number; height: number }> = [];
      for (const [index, image] of images.entries()) {
        const started = performance.now();
        let gray: Awaited<ReturnType<typeof decodeImage>>;
        try {
          gray = await decodeImage(image.bytes, limits, image.declaredImage);
        } catch (error) {
          if (error instanceof ImageError) throw imageProblem(error, fieldOf(index));
          throw error;
        }
        const preprocessStarted = performance.now();
        planes.push(mnistPixels(gray.luma, gray.width, gray.height));
        decoded.push({ format: gray.format, width: gray.width, height: gray.height });
        decodeMs += preprocessStarted - started;
        preprocessMs += performance.now() - preprocessStarted;
      }
      const { labels, inferMs, postprocessMs } = await run(planes, k, signal);
      return {
        results: labels.map((ranked, i) => ({ labels: ranked, image: decoded[i]! })),
        timings: { decodeMs, preprocessMs, inferMs, postprocessMs },
      };
    },
    async classifyPixels(planes, k, signal) {
      await runtime.load();
      for (const plane of planes) {
        if (plane.length !== planeSize)
          throw new RangeError(`expected ${planeSize} values per plane, got ${plane.length}`);
      }
      const { labels } = await run(planes, k, signal);
      return labels.map((ranked) => ({ labels: ranked }));
    },
  };
}
