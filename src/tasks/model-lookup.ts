// Finding a served model for a request: by name (404 naming the field that held it), and ready
// (503 with the reason and Retry-After while it loads or after it failed).
import { ServiceError } from "../errors/service-error";
import type { ServedModel, Services } from "./index";

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
