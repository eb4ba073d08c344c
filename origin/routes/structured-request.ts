// vLLM's structured outputs on /v1/completions (`response_format`, `structured_outputs`), read and
// compiled into the constraint the engine enforces.
import { z } from "zod";
import { ServiceError } from "../../src/errors/service-error";
import {
  SCHEMA_LIMITS,
  SchemaError,
  shapeOf,
  type StructuredOutputs,
} from "../../src/generation/structured/structured-outputs";

/**
 * The most bytes a constraint (its schema or choices, serialized) may take: each step's mask walks
 * it.
 */
export const MAX_CONSTRAINT_BYTES = 32 * 1024;

const JsonSchemaFormat = z
  .object({
    name: z.string(),
    description: z.string().nullable().optional(),
    schema: z.record(z.string(), z.unknown()).nullable().optional(),
    strict: z.boolean().nullable().optional(),
  })
  .loose();

export const ResponseFormatSchema = z
  .object({
    type: z.enum(["text", "json_object", "json_schema", "structural_tag"]),
    json_schema: JsonSchemaFormat.nullable().optional(),
  })
  .loose();

export const StructuredOutputsSchema = z
  .object({
    json: z
      .union([z.string(), z.record(z.string(), z.unknown())])
      .nullable()
      .optional(),
    regex: z.string().nullable().optional(),
    choice: z.array(z.string()).nullable().optional(),
    grammar: z.string().nullable().optional(),
    json_object: z.boolean().nullable().optional(),
    disable_any_whitespace: z.boolean().default(false),
    disable_additional_properties: z.boolean().default(false),
    whitespace_pattern: z.string().nullable().optional(),
    structural_tag: z.string().nullable().optional(),
  })
  .loose();

type ResponseFormat = z.output<typeof ResponseFormatSchema>;
type StructuredOutputsParams = z.output<typeof StructuredOutputsSchema>;

const CONSTRAINTS = [
  "json",
  "regex",
  "choice",
  "grammar",
  "json_object",
  "structural_tag",
] as const;
type Constraint = (typeof CONSTRAINTS)[number];

const badRequest = (field: string, message: string) =>
  new ServiceError(400, "invalid_request", message, { field });

/**
 * The constraints set, as StructuredOutputsParams holds them after a response_format's override.
 */
function merged(
  params: StructuredOutputsParams | undefined,
  format: ResponseFormat | undefined,
): Partial<Record<Constraint, unknown>> {
  const fields: Partial<Record<Constraint, unknown>> = {};
  for (const name of CONSTRAINTS) if (params?.[name] != null) fields[name] = params[name];
  if (format?.type === "json_object") fields.json_object = true;
  // vLLM's override is {"json": schema}: a json_schema without one clears `json`.
  if (format?.type === "json_schema") {
    const schema = format.json_schema?.schema;
    if (schema == null) delete fields.json;
    else fields.json = schema;
  }
  if (format?.type === "structural_tag") fields.structural_tag = format;
  return fields;
}

/**
 * vLLM's structured outputs on /v1/completions: `response_format` and `structured_outputs`, read as
 * vLLM reads them and reduced to the constraint the engine enforces (json_object, a JSON Schema, or
 * a choice). Pinned to vllm-project/vllm: vllm/entrypoints/generate/base/protocol.py
 * (ResponseFormat, JsonSchemaResponseFormat, structured_outputs_from_response_format: a
 * response_format replaces the field of its kind in structured_outputs),
 * vllm/entrypoints/openai/completion/protocol.py (CompletionRequest.validate_response_format,
 * check_structured_outputs_count) and vllm/sampling_params.py (StructuredOutputsParams and its
 * __post_init__: exactly one constraint). Output is always compact JSON (no whitespace between
 * tokens), so disable_any_whitespace is accepted either way; objects with declared properties never
 * get others, so disable_additional_properties is too (vLLM's walk adds additionalProperties: false
 * only beside `properties`). A regex is compiled to a byte DFA
 * (src/generation/structured/regex.ts). grammar, structural_tag and whitespace_pattern are refused
 * by name. The schema is compiled here, so one this service cannot enforce is a 400 naming its
 * place, before the engine sees it.
 *
 * The request's constraint (undefined: none), checked and compiled: vLLM's 400s for more or fewer
 * than one constraint, ours for what this origin cannot enforce, naming the field.
 */
export function structuredOutputsOf(
  params: StructuredOutputsParams | null | undefined,
  format: ResponseFormat | null | undefined,
): StructuredOutputs | undefined {
  const so = params ?? undefined;
  const rf = format ?? undefined;
  if (
    so !== undefined &&
    (["json", "regex", "choice"] as const).filter((name) => so[name] != null).length > 1
  ) {
    throw badRequest(
      "structured_outputs",
      "You can only use one kind of constraints for " +
        "structured outputs ('json', 'regex' or 'choice').",
    );
  }
  if (rf?.type === "json_schema" && rf.json_schema == null)
    throw badRequest(
      "response_format",
      "When response_format type is 'json_schema', the 'json_schema' field must be provided.",
    );
  if (so === undefined && (rf === undefined || rf.type === "text")) return undefined;

  const fields = merged(so, rf);
  const set = CONSTRAINTS.filter((name) => fields[name] !== undefined);
  if (set.length > 1)
    throw badRequest(
      "structured_outputs",
      "You can only use one kind of structured outputs " +
        `constraint but multiple are specified: ${set.join(", ")}`,
    );
  if (set.length === 0)
    throw badRequest(
      "structured_outputs",
      "You must use one kind of structured outputs constraint but none are specified",
    );
  if (so?.whitespace_pattern != null)
    throw badRequest(
      "structured_outputs.whitespace_pattern",
      "structured_outputs.whitespace_pattern is not supported by this " +
        "origin: its JSON is always compact (no whitespace between tokens)",
    );
  const kind = set[0]!;
  const fromFormat = rf !== undefined && rf.type !== "text";
  switch (kind) {
    case "regex":
      return compiled({ regex: String(fields.regex) }, "structured_outputs.regex");
    case "grammar":
      throw badRequest(
        "structured_outputs.grammar",
        "structured_outputs.grammar is not supported by this " +
          "origin (json, json_object, choice and regex are)",
      );
    case "structural_tag":
      throw fromFormat
        ? badRequest(
            "response_format",
            'response_format type "structural_tag" is not supported by this origin',
          )
        : badRequest(
            "structured_outputs.structural_tag",
            "structured_outputs.structural_tag is not supported by " +
              "this origin (json, json_object, choice and regex are)",
          );
    case "json_object":
      if (fields.json_object !== true)
        throw badRequest(
          "structured_outputs.json_object",
          "structured_outputs.json_object: only true is a constraint",
        );
      return { json_object: true };
    case "choice":
      return compiled({ choice: choices(so?.choice ?? []) }, "structured_outputs.choice");
    case "json": {
      const field = fromFormat ? "response_format.json_schema.schema" : "structured_outputs.json";
      return compiled({ json: schemaOf(fields.json, field) }, field);
    }
  }
}

function choices(list: string[]): string[] {
  if (list.length === 0 || list.length > SCHEMA_LIMITS.enumValues)
    throw badRequest(
      "structured_outputs.choice",
      `structured_outputs.choice must list 1–${SCHEMA_LIMITS.enumValues} texts`,
    );
  // An output that may only be empty has no token to end on.
  if (list.every((text) => text === ""))
    throw badRequest(
      "structured_outputs.choice",
      "structured_outputs.choice needs at least one non-empty text",
    );
  return list;
}

/** A schema sent as a JSON string (vLLM's `str | dict`) is parsed here. */
function schemaOf(json: unknown, field: string): unknown {
  if (typeof json !== "string") return json;
  try {
    return JSON.parse(json);
  } catch {
    throw badRequest(field, `${field}: the schema is not valid JSON`);
  }
}

/** The constraint once it fits the size bound and compiles; a schema's failure names its place. */
function compiled(spec: StructuredOutputs, field: string): StructuredOutputs {
  const bytes = Buffer.byteLength(JSON.stringify(spec));
  if (bytes > MAX_CONSTRAINT_BYTES)
    throw badRequest(
      field,
      `${field}: the constraint takes ${bytes} bytes, ` +
        `over this origin's limit of ${MAX_CONSTRAINT_BYTES}`,
    );
  try {
    shapeOf(spec);
  } catch (error) {
    if (error instanceof SchemaError)
      throw badRequest(
        field,
        `${field}: ${error.path === "" ? "" : `${error.path}: `}${error.message}`,
      );
    throw error;
  }
  return spec;
}
