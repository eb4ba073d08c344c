// Model folders on disk: every models/<name>/ with a manifest.json, and graph files read
// only after their sha256 matches the manifest (the same integrity rule as the edge).
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

export interface ModelFolder {
  dir: string;
  manifest: unknown;
}

/** The model folders under `root`, manifests parsed as JSON (not yet validated). */
export function listModelFolders(root: string): ModelFolder[] {
  return readdirSync(root)
    .sort()
    .filter(
      (name) =>
        statSync(join(root, name)).isDirectory() && existsSync(join(root, name, "manifest.json")),
    )
    .map((name) => ({
      dir: join(root, name),
      manifest: JSON.parse(readFileSync(join(root, name, "manifest.json"), "utf8")),
    }));
}

/** Reads a graph file, refusing it unless it has the given sha256. */
export async function readVerifiedFile(
  dir: string,
  file: string,
  sha256: string,
): Promise<Uint8Array> {
  const bytes = await readFile(join(dir, file));
  const actual = createHash("sha256").update(bytes).digest("hex");
  if (actual !== sha256)
    throw new Error(
      `${file} failed its integrity check (sha256 ${actual}, manifest says ${sha256})`,
    );
  return bytes;
}

/**
 * A file the model can serve without (its tokenizer, for structured outputs): undefined when
 * absent, refused when it fails its check.
 */
export async function readOptionalVerifiedFile(
  dir: string,
  file: string,
  sha256: string,
): Promise<Uint8Array | undefined> {
  return existsSync(join(dir, file)) ? readVerifiedFile(dir, file, sha256) : undefined;
}
