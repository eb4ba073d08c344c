// Where model files come from: the Worker bundle or an R2 bucket. Either way the bytes
// are checked against the manifest's sha256 before anything uses them.
import { ServiceError } from "../errors/service-error";
import { toHex } from "../protocols/hex";

/** Files imported into the bundle, by file name within the model's folder. */
export type BundledFiles = Readonly<Record<string, ArrayBuffer>>;

export interface ModelFileSource {
  /** Returns the file's bytes, or undefined where this source does not hold it. */
  read(model: { name: string; version: string }, file: string): Promise<ArrayBuffer | undefined>;
}

/** The R2 key of a model file; scripts/upload-models.mjs writes the same keys. */
export function r2Key(model: { name: string; version: string }, file: string): string {
  return `${model.name}/${model.version}/${file}`;
}

export function bundleSource(files: BundledFiles): ModelFileSource {
  return { read: async (_model, file) => files[file] };
}

export function r2Source(bucket: R2Bucket): ModelFileSource {
  return {
    async read(model, file) {
      const object = await bucket.get(r2Key(model, file));
      return object === null ? undefined : object.arrayBuffer();
    },
  };
}

export async function sha256Hex(bytes: ArrayBuffer | Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return toHex(digest);
}

/** Reads a model file and refuses it unless its sha256 is the manifest's. */
export async function readVerified(
  source: ModelFileSource,
  model: { name: string; version: string },
  file: string,
  sha256: string,
): Promise<Uint8Array> {
  const bytes = await source.read(model, file);
  if (bytes === undefined) {
    throw new ServiceError(
      503,
      "model_not_ready",
      `Model "${model.name}": file ${file} is not available`,
    );
  }
  const actual = await sha256Hex(bytes);
  if (actual !== sha256) {
    throw new ServiceError(
      503,
      "model_not_ready",
      `Model "${model.name}": ${file} failed its integrity check`,
      {
        cause: new Error(`sha256 ${actual}, manifest says ${sha256}`),
      },
    );
  }
  return new Uint8Array(bytes);
}
