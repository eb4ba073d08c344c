// Preloading, as Triton loads its model repository at start-up: the models whose manifest says
// `preload` are loaded before the isolate's first request.
import type { ServedModel, Services } from ".";

export interface PreloadOutcome {
  model: string;
  ok: boolean;
  error?: string;
}

async function preloadOne(model: ServedModel): Promise<PreloadOutcome> {
  const name = model.manifest.name;
  // ready() logs its own failure (model_load_failed) and keeps the model retryable.
  if (!(await model.ready()))
    return { model: name, ok: false, error: model.failure() ?? "not ready" };
  return { model: name, ok: true };
}

/**
 * Loads every model marked `preload`, one after the other; never rejects.
 *
 * Loading means files verified, tokenizer and session created. A warm-up run on a tiny input, as
 * Triton's model_warmup, was measured and bought nothing inside workerd (docs/benchmarks.md, Cold
 * start). The Worker starts this at its top level (src/index.ts, through src/compose.ts), so it
 * runs while the isolate starts — on Cloudflare during the TLS handshake, within the startup CPU
 * limit. Nothing here may break the isolate: a model that fails stays "failed" and the request path
 * loads it again, as for any other model.
 */
export async function preloadModels(services: Services): Promise<PreloadOutcome[]> {
  const outcomes: PreloadOutcome[] = [];
  for (const model of services.list()) {
    if (model.manifest.preload === true) outcomes.push(await preloadOne(model));
  }
  return outcomes;
}
