// The fraud model's reference distribution (models/fraud-gru/drift-reference.json, written by
// scripts/fraud/drift-reference.ts), validated once when the Worker loads.
import { z } from "zod";
import driftReference from "../../../../models/fraud-gru/drift-reference.json";
import type { Reference } from "./psi";

const ReferenceSchema = z.union([
  z.object({
    kind: z.literal("numeric"),
    edges: z.array(z.number()),
    shares: z.array(z.number()),
  }),
  z.object({
    kind: z.literal("categorical"),
    categories: z.array(z.string()),
    shares: z.array(z.number()),
  }),
]);

const FileSchema = z.object({
  model: z.string(),
  modelVersion: z.string(),
  source: z.string(),
  features: z.record(z.string(), ReferenceSchema),
});

export interface DriftReference {
  model: string;
  modelVersion: string;
  source: string;
  features: Record<string, Reference>;
}

/** The reference of `model`, if it ships one. */
export function referenceFor(model: string): DriftReference | undefined {
  const parsed = FileSchema.parse(driftReference);
  return parsed.model === model ? parsed : undefined;
}
