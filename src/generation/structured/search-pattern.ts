// JSON Schema's `pattern`, a search, as the whole-string pattern the byte DFA compiles.
import { SchemaError } from "./schema-error";

/**
 * JSON Schema's `pattern` (ECMA-262, a search: it may match anywhere in the string) as a
 * whole-string pattern: `[\s\S]*` before it unless it starts with `^`, after it unless it
 * ends with `$`. Anchors on separate top-level alternatives (`^a|b$`) are refused.
 */
export function searchPattern(pattern: string): { source: string; offset: number } {
  const anchoredStart = pattern.startsWith("^");
  const anchoredEnd = endsWithAnchor(pattern);
  const inner = pattern.slice(anchoredStart ? 1 : 0, anchoredEnd ? -1 : undefined);
  if ((anchoredStart || anchoredEnd) && hasTopLevelAlternation(inner)) {
    throw new SchemaError(
      "",
      "the regex anchors alternatives separately (^a|b$): group them, as ^(?:a|b)$",
    );
  }
  const prefix = `${anchoredStart ? "" : "[\\s\\S]*"}(?:`;
  // Positions in errors are told in the pattern as written (its ^ dropped, the prefix added).
  return {
    source: `${prefix}${inner})${anchoredEnd ? "" : "[\\s\\S]*"}`,
    offset: prefix.length - (anchoredStart ? 1 : 0),
  };
}

/** Whether the pattern ends with a `$` that is not escaped. */
function endsWithAnchor(pattern: string): boolean {
  if (!pattern.endsWith("$")) return false;
  let backslashes = 0;
  for (let at = pattern.length - 2; at >= 0 && pattern[at] === "\\"; at -= 1) backslashes += 1;
  return backslashes % 2 === 0;
}

function hasTopLevelAlternation(pattern: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let at = 0; at < pattern.length; at += 1) {
    const char = pattern[at];
    if (char === "\\") at += 1;
    else if (inClass) inClass = char !== "]";
    else if (char === "[") inClass = true;
    else if (char === "(") depth += 1;
    else if (char === ")") depth -= 1;
    else if (char === "|" && depth === 0) return true;
  }
  return false;
}
