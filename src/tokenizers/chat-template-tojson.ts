// The `tojson` filter as transformers defines it for chat templates: Python's json.dumps(x,
// ensure_ascii=False, indent=None, separators=None, sort_keys=False).
import { memoWeak } from "../memos";
import { pythonFloatRepr, pythonJsonString } from "./chat-template-json";

/** Runtime number values whose Python text differs from JavaScript's (1.0, big ints). */
export const pythonNumbers = memoWeak<object, string>("chat.python-numbers");

export interface DumpsOptions {
  ensureAscii: boolean;
  indent: string | null;
  separators: [string, string];
  sortKeys: boolean;
}

/** Reads tojson's arguments the way Python binds them: positional, then keywords. */
export function dumpsOptions(args: readonly unknown[]): DumpsOptions {
  const [ensureAscii, indent, separators, sortKeys] = [
    "ensure_ascii",
    "indent",
    "separators",
    "sort_keys",
  ].map((name, index) => {
    const last = args.at(-1);
    if (last instanceof Map && last.has(name)) return rawOf(last.get(name));
    return index < args.length - (args.at(-1) instanceof Map ? 1 : 0) ? args[index] : undefined;
  });
  const indentText =
    typeof indent === "number" ? " ".repeat(indent) : typeof indent === "string" ? indent : null;
  let pair: [string, string] = indentText === null ? [", ", ": "] : [",", ": "];
  if (Array.isArray(separators) && separators.length === 2) {
    const [item, key] = separators.map(rawOf);
    if (typeof item === "string" && typeof key === "string") pair = [item, key];
  }
  return {
    ensureAscii: ensureAscii === true,
    indent: indentText,
    separators: pair,
    sortKeys: sortKeys === true,
  };
}

/**
 * json.dumps of one value.
 *
 * The interpreter hands this function raw values: Maps and arrays of runtime values, strings,
 * numbers; numbers read from JSON keep their Python form through `pythonNumbers`.
 */
export function pythonDumps(value: unknown, options: DumpsOptions, depth = 0): string {
  if (isRuntimeValue(value)) {
    const python = pythonNumbers.get(value);
    if (python !== undefined) return python;
    if (value.type === "FloatValue" && typeof value.value === "number")
      return pythonFloatRepr(value.value);
    return pythonDumps(value.value, options, depth);
  }
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number")
    return Number.isInteger(value) ? String(value) : pythonFloatRepr(value);
  if (typeof value === "string") return pythonJsonString(value, options.ensureAscii);
  const [itemSeparator, keySeparator] = options.separators;
  const inner = options.indent === null ? "" : `\n${options.indent.repeat(depth + 1)}`;
  const outer = options.indent === null ? "" : `\n${options.indent.repeat(depth)}`;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return (
      `[${inner}` +
      `${value.map((item) => pythonDumps(item, options, depth + 1)).join(itemSeparator + inner)}` +
      `${outer}]`
    );
  }
  if (value instanceof Map) {
    if (value.size === 0) return "{}";
    const entries = [...value.entries()].map(([key, item]) => [String(key), item] as const);
    if (options.sortKeys) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const body = entries.map(
      ([key, item]) =>
        `${pythonJsonString(key, options.ensureAscii)}` +
        `${keySeparator}${pythonDumps(item, options, depth + 1)}`,
    );
    return `{${inner}${body.join(itemSeparator + inner)}${outer}}`;
  }
  throw new TypeError(`Object of type ${typeof value} is not JSON serializable`);
}

function isRuntimeValue(value: unknown): value is { type: string; value: unknown } {
  return (
    typeof value === "object" &&
    value !== null &&
    !(value instanceof Map) &&
    !Array.isArray(value) &&
    "type" in value &&
    "value" in value
  );
}

function rawOf(value: unknown): unknown {
  return isRuntimeValue(value) ? value.value : value;
}
