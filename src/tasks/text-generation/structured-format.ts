// A request's structured-output format, compiled by the task when the request arrives: what
// this service cannot enforce — with the limits the origin's matcher applies — is a 400 naming
// the request field, before any model runs.
import { ServiceError } from "../../errors/service-error";
import {
  SchemaError,
  shapeOf,
  type StructuredOutputs,
} from "../../generation/structured/structured-outputs";

/** A request's constraint and the field that asked for it (what a 400 about it names). */
export interface StructuredRequest {
  spec: StructuredOutputs;
  field: string;
}

/**
 * The constraint, its schema compiled here so that what cannot be enforced is a 400 naming its
 * place: `at` maps a JSON Pointer into the schema to the request field (default: under `field`).
 */
export function compiledOrRefused(
  spec: StructuredOutputs,
  field: string,
  at: (path: string) => string = (path) => `${field}${path.replaceAll("/", ".")}`,
): StructuredRequest {
  try {
    shapeOf(spec);
  } catch (error) {
    if (error instanceof SchemaError) {
      const place = error.path === "" ? field : at(error.path);
      throw new ServiceError(400, "invalid_request", `${place}: ${error.message}`, {
        field: place,
      });
    }
    if (error instanceof SyntaxError)
      throw new ServiceError(
        400,
        "invalid_request",
        `${field}: not valid JSON (${error.message})`,
        { field },
      );
    throw error;
  }
  return { spec, field };
}
