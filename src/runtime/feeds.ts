// Feed checks shared by every runtime: a wrong name, dtype or shape is the caller's
// mistake (422 naming the input), never an opaque failure deep inside the runtime.
import { ServiceError } from "../errors/service-error";
import { elementCount, shapeMatches, type Tensor, type TensorSpec } from "../tensors/tensor";

function unprocessable(field: string, detail: string): ServiceError {
  return new ServiceError(422, "unprocessable_input", detail, { field });
}

/** Throws a 422 ServiceError unless the feeds are exactly the declared inputs. */
export function checkFeeds(
  declared: readonly TensorSpec[],
  feeds: Readonly<Record<string, Tensor>>,
): void {
  const names = new Set(declared.map((spec) => spec.name));
  for (const name of Object.keys(feeds)) {
    if (!names.has(name)) {
      throw unprocessable(
        `inputs.${name}`,
        `Unknown input "${name}"; the model takes ${[...names].join(", ")}`,
      );
    }
  }
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
    if (
      !shapeMatches(spec.shape, feed.shape) ||
      feed.shape.some((dim) => !Number.isInteger(dim) || dim < 0)
    ) {
      throw unprocessable(
        `inputs.${spec.name}.shape`,
        `Input "${spec.name}" must have shape [${spec.shape.join(", ")}] ` +
          `(-1 = any size), got [${feed.shape.join(", ")}]`,
      );
    }
    const expected = elementCount(feed.shape);
    if (feed.data.length !== expected) {
      throw unprocessable(
        `inputs.${spec.name}.data`,
        `Input "${spec.name}" with shape [${feed.shape.join(", ")}] ` +
          `needs ${expected} values, got ${feed.data.length}`,
      );
    }
  }
}

/** Throws a 422 ServiceError for requested outputs the model does not have. */
export function checkOutputNames(
  declared: readonly TensorSpec[],
  requested: readonly string[],
): void {
  const names = new Set(declared.map((spec) => spec.name));
  const unknown = requested.find((name) => !names.has(name));
  if (unknown !== undefined) {
    throw unprocessable(
      `outputs.${unknown}`,
      `Unknown output "${unknown}"; the model has ${[...names].join(", ")}`,
    );
  }
}
