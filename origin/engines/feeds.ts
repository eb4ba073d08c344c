// Checks a tensor request against a graph's declared inputs: a wrong name, datatype or
// shape is the caller's mistake (422 naming the input), never an opaque runtime failure.
import { ServiceError } from "../../src/errors/service-error";
import { elementCount, shapeMatches, type Tensor, type TensorSpec } from "../../src/tensors/tensor";

const unprocessable = (field: string, detail: string) =>
  new ServiceError(422, "unprocessable_input", detail, { field });

export function checkFeeds(
  declared: readonly TensorSpec[],
  feeds: Readonly<Record<string, Tensor>>,
): void {
  const names = new Set(declared.map((spec) => spec.name));
  const unknown = Object.keys(feeds).find((name) => !names.has(name));
  if (unknown !== undefined)
    throw unprocessable(
      `inputs.${unknown}`,
      `Unknown input "${unknown}"; the model takes ${[...names].join(", ")}`,
    );
  for (const spec of declared) {
    const feed = feeds[spec.name];
    if (feed === undefined)
      throw unprocessable(`inputs.${spec.name}`, `Missing input "${spec.name}"`);
    if (feed.datatype !== spec.datatype) {
      throw unprocessable(
        `inputs.${spec.name}.datatype`,
        `Input "${spec.name}" must be ${spec.datatype}, got ${feed.datatype}`,
      );
    }
    if (!shapeMatches(spec.shape, feed.shape)) {
      throw unprocessable(
        `inputs.${spec.name}.shape`,
        `Input "${spec.name}" must have shape [${spec.shape.join(", ")}] ` +
          `(-1 = any size), got [${feed.shape.join(", ")}]`,
      );
    }
    if (feed.data.length !== elementCount(feed.shape)) {
      throw unprocessable(
        `inputs.${spec.name}.data`,
        `Input "${spec.name}" with shape [${feed.shape.join(", ")}] ` +
          `needs ${elementCount(feed.shape)} values`,
      );
    }
  }
}

export function checkOutputNames(
  declared: readonly TensorSpec[],
  requested: readonly string[],
): void {
  const names = new Set(declared.map((spec) => spec.name));
  const unknown = requested.find((name) => !names.has(name));
  if (unknown !== undefined)
    throw unprocessable(
      `outputs.${unknown}`,
      `Unknown output "${unknown}"; the model has ${[...names].join(", ")}`,
    );
}
