// The registry's entries as the tasks hold them: each model with the edge's runtime.
import type { ModelRegistry as Registry, RegisteredModel as Registered } from "../models/registry";
import type { InferenceRuntime } from "../runtime";

export type RegisteredModel = Registered<InferenceRuntime>;
export type ModelRegistry = Registry<InferenceRuntime>;
