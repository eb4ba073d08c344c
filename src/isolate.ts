// The isolate's composition: its served models, built once from its bindings, and their preload.
import { env } from "cloudflare:workers";
import { originConfig } from "./compose";
import { bundledModels } from "./models/bundled";
import { createRegistry } from "./models/registry";
import { keep, memoSlot } from "./memos";
import { canaryMonitor, d1Rollbacks, edgeRuntimes } from "./runtime";
import { createBreakers } from "./runtime/origin/circuit-breaker";
import { createServices, type Services } from "./tasks";
import { preloadModels, type PreloadOutcome } from "./tasks/preload";

const breakers = keep("origin.breakers", createBreakers());
const services = memoSlot<Services>("isolate.services");
const preloading = memoSlot<Promise<PreloadOutcome[]>>("isolate.preload");

/**
 * Checks every origin model's configuration (ORIGIN_URL, ORIGIN_POOL, per-model variants) at
 * start-up and logs each mistake, named, as `origin_config_invalid`; such a model answers 503
 * `model_not_ready` with the same words until the configuration is fixed.
 */
function reportOriginConfig(served: Services): void {
  for (const { manifest } of served.list()) {
    if (manifest.runtime !== "origin") continue;
    const { configError } = originConfig(env, manifest.name);
    if (configError !== undefined)
      console.error(
        JSON.stringify({
          event: "origin_config_invalid",
          model: manifest.name,
          error: configError,
        }),
      );
  }
}

/**
 * The Worker's isolate reads its configuration from its env (cloudflare:workers) at each use, so a
 * variable changed between requests (as tests change theirs) is seen without keeping "the env of
 * the latest call". What it builds once and keeps is made through src/memos, whose table names
 * each memo with what it holds, when it is built and what bounds it.
 */
export const isolate = {
  /** The served models, built on first use with the isolate's bindings (R2, origins). */
  services(): Services {
    // Canary rollbacks are shared through D1: one isolate's rollback moves every isolate's
    // traffic back (runtime/origin/canary-monitor).
    if (services.value === undefined) canaryMonitor.share(d1Rollbacks(env.DB));
    services.value ??= createServices(
      createRegistry(bundledModels, {
        bucket: env.MODELS,
        runtimeFor: edgeRuntimes((model) => originConfig(env, model), breakers),
      }),
    );
    return services.value;
  },

  /**
   * Loads the models marked `preload` into the services the requests use, once: the Worker
   * calls it at its top level, where Workers run it before the first request. Never rejects;
   * a model that failed loads on request as usual.
   */
  preload(): Promise<PreloadOutcome[]> {
    preloading.value ??= (() => {
      reportOriginConfig(isolate.services());
      return preloadModels(isolate.services());
    })();
    return preloading.value;
  },
};
