// What a single-shot task runs: its model's primary graph and the runtime's tensor capability.
import { primaryGraph, type Graph } from "../models/manifest";
import type { RegisteredModel } from "./registered-model";
import type { TensorCapability } from "../runtime";

/** The graph and tensor capability of a model; a manifest/runtime mismatch is a build-time bug. */
export function tensorGraph(model: RegisteredModel): { graph: Graph; tensors: TensorCapability } {
  const graph = primaryGraph(model.manifest);
  const tensors = model.runtime.tensors;
  if (graph === undefined || tensors === undefined)
    throw new Error(`Model ${model.manifest.name} has no graph its runtime can run`);
  return { graph, tensors };
}
