// Parses a chat template and rewrites its tree for the edge renderer: `| tojson` as Python's
// json.dumps, and, in the marked variant, the template's own control-token text as markers.
import { parse, tokenize } from "@huggingface/jinja";
import { STRIP_FUNCTION, TOJSON_FUNCTION } from "./chat-template-environment";

export type Program = ReturnType<typeof parse>;

type Node = { type: string } & Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return (
    typeof value === "object" && value !== null && "type" in value && typeof value.type === "string"
  );
}

/**
 * Parses as transformers compiles: trim_blocks and lstrip_blocks.
 *
 * `| tojson` becomes a call to Python's json.dumps because the library's own filter formats numbers
 * the JavaScript way.
 */
export function parseTemplate(source: string): Program {
  const program = parse(tokenize(source, { trim_blocks: true, lstrip_blocks: true }));
  rewriteTojson(program);
  return program;
}

function isTojsonFilter(node: Node): boolean {
  if (node.type !== "FilterExpression" || !isNode(node.filter)) return false;
  const filter = node.filter;
  if (filter.type === "Identifier") return filter.value === "tojson";
  return (
    filter.type === "CallExpression" &&
    isNode(filter.callee) &&
    filter.callee.type === "Identifier" &&
    filter.callee.value === "tojson"
  );
}

function tojsonCall(node: Node): Node {
  const filter = isNode(node.filter) ? node.filter : undefined;
  const filterArgs = filter !== undefined && Array.isArray(filter.args) ? filter.args : [];
  return {
    type: "CallExpression",
    callee: { type: "Identifier", value: TOJSON_FUNCTION },
    args: [node.operand, ...filterArgs],
  };
}

/** `s.strip(chars)`, `s.lstrip(chars)`, `s.rstrip(chars)`: the library ignores `chars`. */
function isStripWithChars(node: Node): boolean {
  if (
    node.type !== "CallExpression" ||
    !Array.isArray(node.args) ||
    node.args.length === 0 ||
    !isNode(node.callee)
  )
    return false;
  const callee = node.callee;
  return (
    callee.type === "MemberExpression" &&
    callee.computed === false &&
    isNode(callee.property) &&
    ["strip", "lstrip", "rstrip"].includes(String(callee.property.value))
  );
}

function stripCall(node: Node): Node {
  const callee: Node = isNode(node.callee) ? node.callee : { type: "Identifier" };
  const method = isNode(callee.property) ? String(callee.property.value) : "strip";
  const args = Array.isArray(node.args) ? node.args : [];
  return {
    type: "CallExpression",
    callee: { type: "Identifier", value: STRIP_FUNCTION },
    args: [callee.object, { type: "StringLiteral", value: method }, ...args],
  };
}

function rewrite(node: Node): Node {
  if (isTojsonFilter(node)) return tojsonCall(node);
  if (isStripWithChars(node)) return stripCall(node);
  return node;
}

/** Rewrites, in place, what the library renders differently from Python: `x | tojson(...)`
 * into `__python_tojson(x, ...)`, `s.strip(chars)` into `__python_strip(s, "strip", chars)`. */
function rewriteTojson(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach((child: unknown, index) => {
      if (isNode(child)) node[index] = rewrite(child);
      rewriteTojson(node[index]);
    });
    return;
  }
  if (!isNode(node)) return;
  for (const [key, child] of Object.entries(node)) {
    if (isNode(child)) Reflect.set(node, key, rewrite(child));
    rewriteTojson(Reflect.get(node, key));
  }
}

/** Where a value flows into the output: bodies, concatenations, ternary branches, set values
 * and filter operands. Comparisons, tests, call arguments and subscripts do not emit. */
const EMITTING_CHILDREN: Readonly<Record<string, readonly string[]>> = {
  Program: ["body"],
  If: ["body", "alternate"],
  For: ["body", "defaultBlock"],
  Set: ["value", "body"],
  Macro: ["body"],
  FilterStatement: ["body"],
  CallStatement: ["body"],
  Ternary: ["trueExpr", "falseExpr"],
  FilterExpression: ["operand"],
};

function emittingChildren(node: Node): readonly string[] {
  if (node.type === "BinaryExpression") {
    const operator: unknown = Reflect.get(Object(node.operator), "value");
    return operator === "+" || operator === "~" || operator === "and" || operator === "or"
      ? ["left", "right"]
      : [];
  }
  return EMITTING_CHILDREN[node.type] ?? [];
}

/** Applies `mark` to every string literal (and raw text) whose value the template emits. */
export function markEmittedLiterals(
  node: unknown,
  mark: (text: string) => string,
  emitting = true,
): void {
  if (Array.isArray(node)) {
    for (const child of node) markEmittedLiterals(child, mark, emitting);
    return;
  }
  if (!isNode(node)) return;
  if (node.type === "StringLiteral" && typeof node.value === "string") {
    if (emitting) node.value = mark(node.value);
    return;
  }
  const emitted = new Set(emitting ? emittingChildren(node) : []);
  for (const [key, child] of Object.entries(node)) {
    if (key === "type") continue;
    markEmittedLiterals(child, mark, emitted.has(key));
  }
}
