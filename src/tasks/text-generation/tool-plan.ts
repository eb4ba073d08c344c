// How a request's tools are used, as vLLM serves function calling: forced choices enforced as JSON
// token by token, "auto" read by the model's own parser, "none" plain text.
import { ServiceError } from "../../errors/service-error";
import type { ToolCallParser } from "../../models/manifest";
import { compiledOrRefused, type StructuredRequest } from "./structured-format";
import type { ToolMode } from "./tool-parsers";

/**
 * A function as a request declares it (chat: under `function`; the Responses API: flat, mapped by
 * the route).
 */
export interface ToolDefinition {
  function: { name: string; parameters?: Record<string, unknown> | null | undefined };
}

/** The request's tool choice, as OpenAI writes it. */
export type ToolChoiceField =
  | "none"
  | "auto"
  | "required"
  | { type: "function"; function: { name: string } }
  | null
  | undefined;

interface ToolBody {
  tools?: readonly ToolDefinition[] | null | undefined;
  tool_choice?: ToolChoiceField;
  parallel_tool_calls?: boolean | null | undefined;
  response_format?: { type: string } | null | undefined;
  structured_outputs?: unknown;
}

/**
 * How a request's tools are used: how its text is read, and the forced call's constraint (none for
 * "auto").
 *
 * A named tool_choice or "required" is enforced token by token as JSON (the function's parameters,
 * or the list of {name, parameters} objects); "none" generates text; "auto" lets the model choose,
 * its calls read by the parser its manifest names (none: "auto" is refused, as vLLM refuses it
 * without --tool-call-parser).
 */
export interface ToolPlan {
  mode: ToolMode;
  structured?: StructuredRequest;
}

/**
 * What a tool plan asks of the generation: a forced call's constraint; for "auto", special
 * tokens kept in the text, as vLLM's hermes parser keeps them (some models' <tool_call> is one).
 */
export function toolOptions(plan: ToolPlan | undefined): {
  structured?: StructuredRequest;
  skipSpecialTokens?: boolean;
} {
  if (plan === undefined) return {};
  if (plan.structured !== undefined) return { structured: plan.structured };
  return { skipSpecialTokens: false };
}

/** The model's side of tool calling: its name, and the parser of its own tool-call format. */
export interface ToolModel {
  name: string;
  parser: ToolCallParser | undefined;
}

const ANY_OBJECT: Record<string, unknown> = { type: "object", properties: {} };

/**
 * Where a request puts a tool's parameters and the named choice's name (chat: under `function`; the
 * Responses API: flat).
 */
export interface ToolFieldNames {
  parameters(index: number): string;
  choiceName: string;
  /** The named choice as the request writes it, for messages. */
  namedChoice: string;
  /**
   * The field a refusal of the default choice ("auto" with no parser) names: tool_choice, or
   * (Workers AI's, which rarely sends one) tools.
   */
  defaultChoice: string;
}
export const CHAT_FIELDS: ToolFieldNames = {
  parameters: (index) => `tools.${index}.function.parameters`,
  choiceName: "tool_choice.function.name",
  namedChoice: '{"type": "function", "function": {"name": …}}',
  defaultChoice: "tool_choice",
};

/**
 * How the request's tools are used (undefined: text alone); a choice this service cannot honour is
 * a 400 naming it.
 */
export function toolPlanOf(
  body: ToolBody,
  model: ToolModel,
  names: ToolFieldNames = CHAT_FIELDS,
): ToolPlan | undefined {
  const tools = body.tools ?? [];
  // As vLLM's: tools without a tool_choice mean "auto".
  const choice = body.tool_choice ?? (tools.length > 0 ? "auto" : "none");
  // "auto" with no tools is text, as "none" is (vLLM refuses it; clients that always send it are
  // common).
  if (choice === "none" || (choice === "auto" && tools.length === 0)) return undefined;
  if (tools.length === 0)
    throw new ServiceError(400, "invalid_request", "When using tool_choice, tools must be set", {
      field: "tool_choice",
    });
  if (choice === "auto") {
    // As vLLM's: a structured output may constrain the text beside "auto".
    if (model.parser !== undefined) return { mode: { kind: "auto", parser: model.parser } };
    const detail = body.tool_choice == null ? " (the default when tools are sent)" : "";
    throw new ServiceError(
      400,
      "invalid_request",
      `tool_choice "auto"${detail} needs a parser for the model's own ` +
        `tool-call format, and model ${model.name} names none: send tool_choice ` +
        `"required", a named function (${names.namedChoice}), or "none"`,
      { field: body.tool_choice == null ? names.defaultChoice : "tool_choice" },
    );
  }
  const structuredToo =
    (body.response_format != null && body.response_format.type !== "text") ||
    body.structured_outputs != null;
  if (structuredToo) {
    throw new ServiceError(
      400,
      "invalid_request",
      "You can only either use constraints for structured outputs or tools, not both",
      { field: "tool_choice" },
    );
  }
  if (choice === "required") {
    const { schema, owners } = requiredSchema(tools, body.parallel_tool_calls ?? true, names);
    return {
      mode: { kind: "required" },
      structured: compiledOrRefused({ json: schema }, "tools", (path) =>
        requiredPath(path, owners, names),
      ),
    };
  }
  const at = tools.findIndex((tool) => tool.function.name === choice.function.name);
  if (at === -1)
    throw new ServiceError(
      400,
      "invalid_request",
      "The tool specified in tool_choice does not match any of the specified tools",
      { field: names.choiceName },
    );
  const field = names.parameters(at);
  return {
    mode: { kind: "named", name: choice.function.name },
    structured: compiledOrRefused({ json: tools[at]!.function.parameters ?? ANY_OBJECT }, field),
  };
}

/**
 * vLLM's schema for "required": a list of at least one {name, parameters} object, each tool an
 * alternative; the tools' $defs (and definitions) gathered at the root, where their $refs point.
 */
function requiredSchema(
  tools: readonly ToolDefinition[],
  parallel: boolean,
  names: ToolFieldNames,
): { schema: Record<string, unknown>; owners: Map<string, number> } {
  const gathered: Record<"$defs" | "definitions", Record<string, unknown>> = {
    $defs: {},
    definitions: {},
  };
  /** "$defs/<name>" → the first tool that defined it. */
  const owners = new Map<string, number>();
  const alternatives = tools.map((tool, index) => {
    const { $defs, definitions, ...parameters } = tool.function.parameters ?? ANY_OBJECT;
    for (const [key, defs] of [
      ["$defs", $defs],
      ["definitions", definitions],
    ] as const) {
      if (defs === undefined || defs === null || typeof defs !== "object") continue;
      for (const [name, definition] of Object.entries(defs)) {
        const known = gathered[key][name];
        if (known !== undefined && JSON.stringify(known) !== JSON.stringify(definition)) {
          const field = `${names.parameters(index)}.${key}.${name}`;
          throw new ServiceError(
            400,
            "invalid_request",
            `${field}: another tool defines ${key}/${name} differently; with ` +
              'tool_choice "required" the tools\' definitions share one namespace',
            { field },
          );
        }
        gathered[key][name] = definition;
        if (!owners.has(`${key}/${name}`)) owners.set(`${key}/${name}`, index);
      }
    }
    return {
      type: "object",
      properties: { name: { type: "string", enum: [tool.function.name] }, parameters },
      required: ["name", "parameters"],
    };
  });
  const schema = {
    type: "array",
    minItems: 1,
    ...(parallel ? {} : { maxItems: 1 }),
    items: { anyOf: alternatives },
    ...(Object.keys(gathered.$defs).length > 0 ? { $defs: gathered.$defs } : {}),
    ...(Object.keys(gathered.definitions).length > 0 ? { definitions: gathered.definitions } : {}),
  };
  return { schema, owners };
}

/**
 * A place in the "required" schema → the request field it came from
 * (tools.<i>.function.parameters…).
 */
function requiredPath(
  path: string,
  owners: ReadonlyMap<string, number>,
  names: ToolFieldNames,
): string {
  const alternative = /^\/items\/anyOf\/(\d+)\/properties\/parameters(.*)$/.exec(path);
  if (alternative !== null)
    return `${names.parameters(Number(alternative[1]))}${alternative[2]!.replaceAll("/", ".")}`;
  const definition = /^\/(\$defs|definitions)\/([^/]+)(.*)$/.exec(path);
  const owner = definition === null ? undefined : owners.get(`${definition[1]}/${definition[2]}`);
  if (owner !== undefined)
    return (
      `${names.parameters(owner)}.${definition![1]}.` +
      `${definition![2]}${definition![3]!.replaceAll("/", ".")}`
    );
  return "tools";
}
