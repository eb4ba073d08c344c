// Triton's model repository extension, read side: `POST /v2/repository/index` lists every
// model with its state (READY, LOADING, UNAVAILABLE + reason) without loading any of them.
// Loading and unloading are not offered: models load on first use.
import { z } from "zod";
import { invalidRequest } from "../../errors/invalid-request";
import type { ServedModel } from "../../tasks";

export const IndexRequestSchema = z.object({ ready: z.boolean().optional() }).catchall(z.unknown());

export interface IndexEntry {
  name: string;
  version: string;
  state: "READY" | "LOADING" | "UNAVAILABLE";
  reason?: string;
}

export function indexEntry(model: ServedModel): IndexEntry {
  const { name, version } = model.manifest;
  const state = model.state();
  switch (state) {
    case "ready":
      return { name, version, state: "READY" };
    case "loading":
      return { name, version, state: "LOADING" };
    case "failed":
      return { name, version, state: "UNAVAILABLE", reason: model.failure() ?? "failed to load" };
    case "unloaded":
      return {
        name,
        version,
        state: "UNAVAILABLE",
        reason: "not loaded yet: loads on first use or readiness check",
      };
    default: {
      const unknown: never = state;
      throw new Error(`Unknown model state ${String(unknown)}`);
    }
  }
}

/** The index, optionally only the ready models (`{"ready": true}`), as Triton filters it. */
export function repositoryIndex(models: readonly ServedModel[], body: unknown): IndexEntry[] {
  const parsed = IndexRequestSchema.safeParse(body ?? {});
  if (!parsed.success) throw invalidRequest(parsed.error, "body");
  const entries = models.map(indexEntry);
  return parsed.data.ready === true ? entries.filter((entry) => entry.state === "READY") : entries;
}
