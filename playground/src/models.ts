// The service's models (GET /v1/models), fetched once and shared: each panel's model list is
// the models of its task, and the Models tab shows them all.
import { call } from "./api";

export interface ModelCard {
  id: string;
  task: string;
  runtime: string;
  state: string;
  version?: string;
  labels?: string[];
}

let listing: Promise<ModelCard[]> | undefined;

/** Every model the service serves; fetched again after `refresh`. */
export function models(refresh = false): Promise<ModelCard[]> {
  if (listing === undefined || refresh) {
    listing = call("/v1/models")
      .then(async (response) => ((await response.json()) as { data: ModelCard[] }).data)
      .catch((error: unknown) => {
        listing = undefined;
        throw error;
      });
  }
  return listing;
}

/** Fills a <select> with the models of `task` (ids only), keeping the current choice. */
export async function fillModelSelect(select: HTMLSelectElement, task: string): Promise<void> {
  const current = select.value;
  const ids = (await models()).filter((model) => model.task === task).map((model) => model.id);
  select.replaceChildren(...ids.map((id) => new Option(id, id)));
  if (ids.includes(current)) select.value = current;
}
