// How a route finds the model services (built by the app that mounts the routes).
import { createMiddleware } from "hono/factory";
import { ServiceError } from "../../errors/service-error";
import type { FraudStores } from "../../compose";
import type { ServedModel, Services } from "../../tasks";

export type AppEnv = {
  Bindings: Env;
  Variables: { services: Services; fraudStores: (env: Env) => FraudStores; requestId: string };
};

/** Hands routes what the composition root built; routes never build runtimes or stores. */
export function provideServices(
  servicesFor: (env: Env) => Services,
  fraudStores?: (env: Env) => FraudStores,
) {
  return createMiddleware<AppEnv>(async (c, next) => {
    c.set("services", servicesFor(c.env));
    if (fraudStores !== undefined) c.set("fraudStores", fraudStores);
    return next();
  });
}

/** The served model by name, or a 404 problem naming the field that held it. */
export function findModel(all: Services, name: string, field: string): ServedModel {
  const model = all.get(name);
  if (model === undefined) {
    const known = all
      .list()
      .map((served) => served.manifest.name)
      .join(", ");
    throw new ServiceError(
      404,
      "model_not_found",
      `No model named "${name}" (available: ${known})`,
      { field },
    );
  }
  return model;
}

/** Waits for the model to be loaded and verified; 503 with the reason otherwise. */
export async function requireReady(model: ServedModel): Promise<void> {
  if (await model.ready()) return;
  throw new ServiceError(
    503,
    "model_not_ready",
    `Model "${model.manifest.name}" is not ready: ${model.failure() ?? "loading"}`,
    {
      headers: { "retry-after": "5" },
    },
  );
}
