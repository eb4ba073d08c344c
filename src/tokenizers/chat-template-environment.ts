// The template environment transformers gives chat templates, rebuilt for @huggingface/jinja:
// raise_exception, strftime_now, range, Python's tojson, Python-printed numbers.
import { Environment } from "@huggingface/jinja";
import { JsonNumber } from "./chat-template-json";
import { strftime } from "./chat-template-strftime";
import { dumpsOptions, pythonDumps, pythonNumbers } from "./chat-template-tojson";

/** A value a template reads: JSON, with numbers optionally kept in their source form. */
export type TemplateValue =
  | string
  | number
  | boolean
  | null
  | undefined
  | JsonNumber
  | readonly TemplateValue[]
  | { readonly [key: string]: TemplateValue };

/**
 * The name `x | tojson(...)` is rewritten to call.
 *
 * See chat-template-ast.ts, which rewrites the parser's `| tojson` into this call.
 */
export const TOJSON_FUNCTION = "__python_tojson";

/** The name `s.strip(chars)` (and lstrip/rstrip) is rewritten to call. */
export const STRIP_FUNCTION = "__python_strip";

/** What raise_exception throws: the template refused its input. */
export class TemplateRaise extends Error {
  override readonly name = "TemplateRaise";
}

/** A fresh environment with transformers' globals and the given variables. */
export function createEnvironment(
  variables: Readonly<Record<string, TemplateValue>>,
  now: () => Date,
): Environment {
  const env = new Environment();
  const constants: Array<[string, boolean | null]> = [
    ["true", true],
    ["false", false],
    ["none", null],
    ["True", true],
    ["False", false],
    ["None", null],
  ];
  for (const [name, value] of constants) env.set(name, value);
  env.set("raise_exception", (message: unknown) => {
    throw new TemplateRaise(String(message));
  });
  env.set("strftime_now", (format: unknown) => strftime(now(), String(format)));
  env.set("range", range);
  env.set(STRIP_FUNCTION, pythonStrip);
  env.set(TOJSON_FUNCTION, (value: unknown, ...args: unknown[]) =>
    pythonDumps(value, dumpsOptions(args)),
  );
  for (const [name, value] of Object.entries(variables)) {
    if (value !== undefined) annotate(env.set(name, plain(value)), value);
  }
  return env;
}

function range(start: unknown, stop?: unknown, step: unknown = 1): number[] {
  const [from, to] = stop === undefined ? [0, Number(start)] : [Number(start), Number(stop)];
  const by = Number(step);
  if (by === 0) throw new Error("range() arg 3 must not be zero");
  const out: number[] = [];
  for (let i = from; by > 0 ? i < to : i > to; i += by) out.push(i);
  return out;
}

/** Python's str.strip/lstrip/rstrip with a set of characters (None: whitespace). */
function pythonStrip(text: unknown, method: unknown, chars?: unknown): string {
  if (typeof text !== "string")
    throw new TypeError(`'${typeof text}' object has no attribute '${String(method)}'`);
  const set = typeof chars === "string" ? new Set(Array.from(chars)) : undefined;
  const strips = (char: string) => (set === undefined ? /\s/.test(char) : set.has(char));
  const chars_ = Array.from(text);
  let start = 0;
  let end = chars_.length;
  if (method !== "rstrip") while (start < end && strips(chars_[start] ?? "")) start++;
  if (method !== "lstrip") while (end > start && strips(chars_[end - 1] ?? "")) end--;
  return chars_.slice(start, end).join("");
}

/** The value as JSON.parse would have given it (numbers as JavaScript numbers). */
function plain(value: TemplateValue): unknown {
  if (value instanceof JsonNumber) return value.value;
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plain(item)]));
  }
  return value;
}

/** Gives the runtime values built from JsonNumbers their Python text (tojson, printing). */
function annotate(runtime: unknown, value: TemplateValue): void {
  if (typeof runtime !== "object" || runtime === null || !("value" in runtime)) return;
  if (value instanceof JsonNumber) {
    const python = value.python;
    pythonNumbers.set(runtime, python);
    Object.defineProperty(runtime, "toString", { value: () => python });
    return;
  }
  const inner: unknown = runtime.value;
  if (Array.isArray(value) && Array.isArray(inner)) {
    value.forEach((item: TemplateValue, index) => annotate(inner[index], item));
  } else if (typeof value === "object" && value !== null && inner instanceof Map) {
    for (const [key, item] of Object.entries(value)) annotate(inner.get(key), item);
  }
}
