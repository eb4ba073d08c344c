// The model registry: validated manifests, each with its runtime and verified file reader.
import { createRuntime, type InferenceRuntime } from "../runtime";
import { ManifestSchema, type Manifest } from "./manifest";
import { bundleSource, readVerified, r2Source, type BundledFiles, type ModelFileSource } from "./store";

export interface ModelEntry {
  /** The manifest as shipped (validated here). */
  manifest: unknown;
  /** Files imported into the bundle; a model without them is read from R2. */
  files?: BundledFiles;
}

export interface RegisteredModel {
  manifest: Manifest;
  runtime: InferenceRuntime;
  /** Reads one of the model's files, refusing it unless it has the given sha256. */
  readFile(file: string, sha256: string): Promise<Uint8Array>;
}

export interface ModelRegistry {
  list(): RegisteredModel[];
  get(name: string): RegisteredModel | undefined;
}

/** Builds a registry; an invalid manifest is a build-time bug, so it throws here. */
export function createRegistry(entries: readonly ModelEntry[], bucket: R2Bucket): ModelRegistry {
  const models = new Map<string, RegisteredModel>();
  for (const entry of entries) {
    const manifest = ManifestSchema.parse(entry.manifest);
    const source: ModelFileSource = entry.files === undefined ? r2Source(bucket) : bundleSource(entry.files);
    const readFile = (file: string, sha256: string) => readVerified(source, manifest, file, sha256);
    const runtime = createRuntime(manifest, () => readFile(manifest.file, manifest.sha256));
    models.set(manifest.name, { manifest, runtime, readFile });
  }
  return {
    list: () => [...models.values()],
    get: (name) => models.get(name),
  };
}
