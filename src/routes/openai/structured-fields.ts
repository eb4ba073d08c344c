// Structured outputs as clients ask for them: OpenAI's `response_format` and vLLM's
// `structured_outputs`, read into the one format the task compiles.
import { z } from "@hono/zod-openapi";
import type { StructuredOutputs } from "../../generation/structured/structured-outputs";
import {
  compiledOrRefused,
  type StructuredRequest,
} from "../../tasks/text-generation/structured-format";
import { refused } from "./field-policies";

const Schema = z
  .union([z.record(z.string(), z.unknown()), z.boolean()])
  .openapi({ description: "A JSON Schema (the supported subset is in the README)" });
const MAX_CHOICES = 256;

/**
 * OpenAI's JSON schema format: under `json_schema` in response_format, beside `type` in
 * text.format.
 */
const JsonSchemaConfig = {
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "1–64 letters, digits, underscores or dashes"),
  description: z.string().max(4096).nullish(),
  schema: Schema,
  strict: z.boolean().nullish(),
};

export const ResponseFormat = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("text") }).strict(),
    z.object({ type: z.literal("json_object") }).strict(),
    z
      .object({ type: z.literal("json_schema"), json_schema: z.object(JsonSchemaConfig).strict() })
      .strict(),
  ])
  .nullish()
  .openapi({
    description:
      'OpenAI: {"type": "json_object"} (a JSON object) or {"type": "json_schema", ' +
      '"json_schema": {"name", "schema"}}; compact JSON, enforced token by token',
  });

/**
 * The Responses API's `text.format`: as response_format, with the json_schema's fields beside
 * `type` (OpenAI's ResponseFormatTextJSONSchemaConfig).
 */
export const TextFormat = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("text") }).strict(),
    z.object({ type: z.literal("json_object") }).strict(),
    z.object({ type: z.literal("json_schema"), ...JsonSchemaConfig }).strict(),
  ])
  .nullish()
  .openapi({
    description:
      '{"type": "text"}, {"type": "json_object"}, or {"type": "json_schema", ' +
      '"name", "schema"}: compact JSON, enforced token by token',
  });

/** A Responses API text.format as the response_format it means. */
export function responseFormatOf(
  format: z.infer<typeof TextFormat>,
): z.infer<typeof ResponseFormat> {
  if (format == null || format.type !== "json_schema") return format;
  const { type, ...json_schema } = format;
  return { type, json_schema };
}

/**
 * Output is compact JSON (vLLM's disable_any_whitespace), and objects write only their declared
 * properties (disable_additional_properties): both options are accepted at either value.
 */
export const StructuredOutputsField = z
  .object({
    json: z.union([Schema, z.string().max(65_536)]).nullish(),
    json_object: z.literal(true).nullish(),
    choice: z.array(z.string().min(1).max(1024)).min(1).max(MAX_CHOICES).nullish(),
    regex: z
      .string()
      .min(1)
      .max(4096)
      .nullish()
      .openapi({
        description:
          "A pattern the whole output matches (Python's and JavaScript's " +
          "shared syntax; the README lists what is supported)",
      }),
    grammar: refused("grammar"),
    structural_tag: refused("structural_tag"),
    whitespace_pattern: refused("whitespace_pattern"),
    disable_any_whitespace: z.boolean().nullish(),
    disable_additional_properties: z.boolean().nullish(),
    disable_fallback: z.boolean().nullish(),
  })
  .strict()
  .refine(
    (value) =>
      [value.json, value.json_object, value.choice, value.regex].filter(
        (constraint) => constraint != null,
      ).length === 1,
    "set exactly one of json, json_object, choice, regex",
  )
  .nullish()
  .openapi({
    description:
      `vLLM: one of json (a JSON Schema), json_object (true), choice (1–${MAX_CHOICES} ` +
      "texts, the output is exactly one) or regex (the output matches it whole)",
  });

interface StructuredBody {
  response_format?: z.infer<typeof ResponseFormat>;
  structured_outputs?: z.infer<typeof StructuredOutputsField>;
}

/** Where the request put its response_format (the Responses API: text.format). */
interface Fields {
  format: string;
  schema: string;
}

/**
 * The request's constraint (undefined: none), its schema compiled here so that what cannot be
 * enforced is a 400 naming its place.
 *
 * As in vLLM, a response_format other than text overrides structured_outputs.
 */
export function structuredOutputsOf(
  body: StructuredBody,
  fields: Fields = { format: "response_format", schema: "response_format.json_schema.schema" },
): StructuredRequest | undefined {
  const format = body.response_format;
  let spec: StructuredOutputs | undefined;
  let field: string;
  if (format != null && format.type !== "text") {
    spec =
      format.type === "json_object" ? { json_object: true } : { json: format.json_schema.schema };
    field = format.type === "json_object" ? fields.format : fields.schema;
  } else {
    const given = body.structured_outputs;
    if (given == null) return undefined;
    spec =
      given.json_object != null
        ? { json_object: true }
        : given.choice != null
          ? { choice: given.choice }
          : given.regex != null
            ? { regex: given.regex }
            : { json: given.json };
    field =
      given.json != null
        ? "structured_outputs.json"
        : given.regex != null
          ? "structured_outputs.regex"
          : "structured_outputs";
  }
  return compiledOrRefused(spec, field);
}
