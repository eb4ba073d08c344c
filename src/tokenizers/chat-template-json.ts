// JSON numbers as Python sees them: request bodies that feed a template are parsed here, so a
// schema's `1.0`, `1e-05` or 20-digit integer prints as json.dumps prints it.

/**
 * A number from JSON source, with the text Python's json.dumps would print for it.
 *
 * Chat templates print tool schemas with `tojson`, which transformers implements as Python's
 * json.dumps: `1.0` stays `1.0`, `1e-05` stays `1e-05` and a 20-digit integer keeps every digit.
 * JSON.parse loses all three.
 */
export class JsonNumber {
  readonly value: number;
  /** `int` (no fraction or exponent in the source) or `float`, as Python's json.loads reads it. */
  readonly kind: "int" | "float";
  /** What Python prints: repr of the int or float. */
  readonly python: string;

  constructor(source: string) {
    this.kind = /[.eE]/.test(source) ? "float" : "int";
    this.value = Number(source);
    this.python = this.kind === "int" ? BigInt(source).toString() : pythonFloatRepr(this.value);
  }
}

/** A JSON value whose numbers keep their source form. */
export type LosslessJson =
  | string
  | boolean
  | null
  | JsonNumber
  | LosslessJson[]
  | { [key: string]: LosslessJson };

/** Python's repr(float): shortest round-trip digits, exponent form below 1e-4 or from 1e16. */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "Infinity";
  if (value === -Infinity) return "-Infinity";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const [mantissa = "", exponentText = "0"] = value.toExponential().split("e");
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "");
  const sign = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const power = Math.abs(exponent).toString().padStart(2, "0");
    return `${sign}${head}e${exponent < 0 ? "-" : "+"}${power}`;
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  const integer = digits.slice(0, exponent + 1).padEnd(exponent + 1, "0");
  const fraction = digits.slice(exponent + 1);
  return `${sign}${integer}.${fraction === "" ? "0" : fraction}`;
}

/** Python's json.dumps string escaping with ensure_ascii=False (or True). */
export function pythonJsonString(text: string, ensureAscii: boolean): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const char = text[i] ?? "";
    if (char === '"') out += '\\"';
    else if (char === "\\") out += "\\\\";
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char === "\t") out += "\\t";
    else if (char === "\b") out += "\\b";
    else if (char === "\f") out += "\\f";
    else if (code < 0x20 || (ensureAscii && code > 0x7e))
      out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += char;
  }
  return `${out}"`;
}

/** Parses JSON text like JSON.parse, except that numbers become JsonNumber. */
export function parseLosslessJson(text: string): LosslessJson {
  let at = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`Invalid JSON at position ${at}: ${what}`);
  };
  const skip = () => {
    while (at < text.length && " \t\n\r".includes(text[at] ?? "")) at++;
  };
  const value = (depth: number): LosslessJson => {
    if (depth > 512) fail("nested too deeply");
    skip();
    const char = text[at];
    if (char === "{") {
      at++;
      const object: { [key: string]: LosslessJson } = {};
      skip();
      if (text[at] === "}") {
        at++;
        return object;
      }
      for (;;) {
        skip();
        if (text[at] !== '"') fail("expected a key");
        const key = string();
        skip();
        if (text[at++] !== ":") fail("expected ':'");
        Object.defineProperty(object, key, {
          value: value(depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        skip();
        const next = text[at++];
        if (next === "}") return object;
        if (next !== ",") fail("expected ',' or '}'");
      }
    }
    if (char === "[") {
      at++;
      const array: LosslessJson[] = [];
      skip();
      if (text[at] === "]") {
        at++;
        return array;
      }
      for (;;) {
        array.push(value(depth + 1));
        skip();
        const next = text[at++];
        if (next === "]") return array;
        if (next !== ",") fail("expected ',' or ']'");
      }
    }
    if (char === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(
      text.slice(at, at + 400),
    );
    if (literal === null) return fail("unexpected character");
    at += literal[0].length;
    if (literal[0] === "true") return true;
    if (literal[0] === "false") return false;
    if (literal[0] === "null") return null;
    return new JsonNumber(literal[0]);
  };
  const string = (): string => {
    const end = findStringEnd(text, at);
    if (end === -1) fail("unterminated string");
    const raw = text.slice(at, end + 1);
    at = end + 1;
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === "string" ? parsed : fail("bad string");
  };
  const result = value(0);
  skip();
  if (at !== text.length) fail("trailing characters");
  return result;
}

function findStringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const char = text[i];
    if (char === "\\") i++;
    else if (char === '"') return i;
  }
  return -1;
}
