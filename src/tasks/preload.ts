// Preloading, as Triton loads its model repository at start-up: the models whose manifest
// says `preload` are loaded (files verified, tokenizer and session created) and run once on
// a tiny input before the isolate's first request. The Worker starts this at its top level
// (src/index.ts, through src/compose.ts), so it runs while the isolate starts — on Cloudflare during the TLS
// handshake, within the startup CPU limit. Nothing here may break the isolate: a model that
// fails stays "failed" and the request path loads it again, as for any other model.
import type { ServedModel, Services } from ".";

export interface PreloadOutcome {
  model: string;
  ok: boolean;
  error?: string;
}

async function preloadOne(model: ServedModel): Promise<PreloadOutcome> {
  const name = model.manifest.name;
  // ready() logs its own failure (model_load_failed) and keeps the model retryable.
  if (!(await model.ready())) return { model: name, ok: false, error: model.failure() ?? "not ready" };
  try {
    await model.warmUp();
    return { model: name, ok: true };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(JSON.stringify({ event: "model_warm_up_failed", model: name, error: message }));
    return { model: name, ok: false, error: message };
  }
}

/** Loads and warms up every model marked `preload`, one after the other; never rejects. */
export async function preloadModels(services: Services): Promise<PreloadOutcome[]> {
  const outcomes: PreloadOutcome[] = [];
  for (const model of services.list()) {
    if (model.manifest.preload === true) outcomes.push(await preloadOne(model));
  }
  return outcomes;
}
