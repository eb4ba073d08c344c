// Translates the Oniguruma patterns of Hugging Face tokenizer.json files (the Rust crate
// compiles them with onig, Unicode on) into JavaScript `u`-flag regex sources, at build
// time, so the edge never rewrites a pattern:
// - `\s` / `\S` become Unicode White_Space classes (JS's \s adds U+FEFF and lacks U+0085);
// - `(?i:…)` (no inline modifiers in Node 20/22) becomes explicit case classes, with the
//   Unicode simple case folds Oniguruma applies (s ~ ſ U+017F, k ~ K U+212A).

/** Unicode White_Space, as Oniguruma's `\s` matches it. */
const WHITE_SPACE =
  "\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const EXTRA_FOLDS = { s: "\u017f", k: "\u212a" };

/** Returns a JS regex source (for flags "gu") equivalent to an Oniguruma pattern. */
export function onigurumaToJs(pattern) {
  let out = "";
  let inClass = false;
  let caseless = 0; // depth of (?i: groups
  const groups = []; // per open paren: whether it opened a (?i: group
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[i + 1];
      if (next === undefined) throw new Error(`dangling escape in ${pattern}`);
      i++;
      if (next === "s") out += inClass ? WHITE_SPACE : `[${WHITE_SPACE}]`;
      else if (next === "S") {
        if (inClass) throw new Error(`\\S inside a class is not translated: ${pattern}`);
        out += `[^${WHITE_SPACE}]`;
      } else if (next === "p" || next === "P") {
        const close = pattern.indexOf("}", i);
        out += `\\${next}${pattern.slice(i + 1, close + 1)}`;
        i = close;
      } else if ("dwDWbBhHAzZG".includes(next)) {
        throw new Error(`escape \\${next} is not translated: ${pattern}`);
      } else out += `\\${next}`;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      if (c === "[") throw new Error(`nested class is not translated: ${pattern}`);
      out += caseless > 0 && /[a-zA-Z]/.test(c) ? caseClassBody(c) : c;
      continue;
    }
    if (c === "[") {
      inClass = true;
      out += c;
      if (pattern[i + 1] === "^") {
        out += "^";
        i++;
      }
      continue;
    }
    if (c === "(") {
      if (pattern.startsWith("(?i:", i)) {
        groups.push(true);
        caseless++;
        out += "(?:";
        i += 3;
        continue;
      }
      if (pattern.startsWith("(?", i) && !/^\(\?(?:[:=!]|<[=!])/.test(pattern.slice(i, i + 4))) {
        throw new Error(`group syntax is not translated: ${pattern.slice(i, i + 6)}`);
      }
      groups.push(false);
      out += c;
      continue;
    }
    if (c === ")") {
      if (groups.pop()) caseless--;
      out += c;
      continue;
    }
    out += caseless > 0 && /[a-zA-Z]/.test(c) ? `[${caseClassBody(c)}]` : c;
  }
  return out;
}

function caseClassBody(letter) {
  const lower = letter.toLowerCase();
  return `${lower}${lower.toUpperCase()}${EXTRA_FOLDS[lower] ?? ""}`;
}

/** Escapes a literal string for a JS regex source. */
export function escapeLiteral(text) {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
}
