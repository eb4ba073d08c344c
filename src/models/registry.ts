// The model registry: validated manifests, each with its runtime (whatever the caller builds:
// the edge's runtimes, src/runtime) and a reader of its verified files.
import { ManifestSchema, type Manifest } from "./manifest";
import {
  bundleSource,
  readVerified,
  r2Source,
  type BundledFiles,
  type ModelFileSource,
} from "./store";

export interface ModelEntry {
  /** The manifest as shipped (validated here). */
  manifest: unknown;
  /** Files imported into the bundle; a model without them is read from R2. */
  files?: BundledFiles;
}

export interface RegisteredModel<Runtime> {
  manifest: Manifest;
  runtime: Runtime;
  /** Reads one of the model's files, refusing it unless it has the given sha256. */
  readFile(file: string, sha256: string): Promise<Uint8Array>;
}

export interface ModelRegistry<Runtime> {
  list(): RegisteredModel<Runtime>[];
  get(name: string): RegisteredModel<Runtime> | undefined;
}

/** Builds the runtime of one model from its manifest and a loader of its verified graphs. */
export type RuntimeFactory<Runtime> = (
  manifest: Manifest,
  loadGraph: (graph: string) => Promise<Uint8Array>,
) => Runtime;

export interface RegistryOptions<Runtime> {
  /** Where models without bundled files are read from. */
  bucket?: R2Bucket;
  /** The Worker's: `edgeRuntimes(origin)` (src/runtime), which follows each manifest's `runtime`;
   * the reference origin's runs everything natively. */
  runtimeFor: RuntimeFactory<Runtime>;
}

/** Builds a registry; an invalid manifest is a build-time bug, so it throws here. */
export function createRegistry<Runtime>(
  entries: readonly ModelEntry[],
  options: RegistryOptions<Runtime>,
): ModelRegistry<Runtime> {
  const models = new Map<string, RegisteredModel<Runtime>>();
  for (const entry of entries) {
    const manifest = ManifestSchema.parse(entry.manifest);
    // Bundled files first; what the bundle lacks (e.g. an LLM's graph for the in-isolate
    // loop, too large to bundle) comes from R2.
    const sources = [
      ...(entry.files === undefined ? [] : [bundleSource(entry.files)]),
      ...(options.bucket === undefined ? [] : [r2Source(options.bucket)]),
    ];
    if (sources.length === 0)
      throw new Error(
        `Model "${manifest.name}" has neither bundled files nor a bucket to read them from`,
      );
    const source: ModelFileSource = {
      async read(model, file) {
        for (const candidate of sources) {
          const bytes = await candidate.read(model, file);
          if (bytes !== undefined) return bytes;
        }
        return undefined;
      },
    };
    const readFile = (file: string, sha256: string) => readVerified(source, manifest, file, sha256);
    const loadGraph = async (name: string) => {
      const graph = manifest.graphs[name];
      if (graph === undefined) throw new Error(`Model "${manifest.name}" has no graph "${name}"`);
      return readFile(graph.file, graph.sha256);
    };
    const runtime = options.runtimeFor(manifest, loadGraph);
    models.set(manifest.name, { manifest, runtime, readFile });
  }
  return {
    list: () => [...models.values()],
    get: (name) => models.get(name),
  };
}
