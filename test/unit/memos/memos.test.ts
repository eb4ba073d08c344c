// Holds src/ to its rule that every memo an isolate keeps is made through src/memos and named in
// its table: module-level state made anywhere else fails here, as does a table entry no module
// uses or one used twice.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { clearMemos, MEMOS, memoEntries, memoMap, memoSlot, memoWeak } from "../../../src/memos";

const ROOT = join(import.meta.dirname, "../../..");
const MAKERS = new Set(["memoMap", "memoWeak", "memoSlot", "keep"]);
const MUTABLE = new Set(["Map", "WeakMap", "Set", "WeakSet"]);

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === "src/memos" ? [] : sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

const parsed = sources("src").map((path) => ({
  path,
  file: ts.createSourceFile(path, readFileSync(join(ROOT, path), "utf8"), ts.ScriptTarget.Latest),
}));

/**
 * `let`/`var` at a module's top level, or an empty Map/WeakMap/Set/WeakSet made there (unless it
 * is typed read-only: an empty constant).
 */
function moduleState(file: ts.SourceFile): string[] {
  const found: string[] = [];
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const list = statement.declarationList;
    const constant = (list.flags & ts.NodeFlags.Const) !== 0;
    for (const declaration of list.declarations) {
      const name = declaration.name.getText(file);
      const init = declaration.initializer;
      const readOnly = declaration.type?.getText(file).startsWith("Readonly") === true;
      const emptyCollection =
        !readOnly &&
        init !== undefined &&
        ts.isNewExpression(init) &&
        MUTABLE.has(init.expression.getText(file)) &&
        (init.arguments === undefined || init.arguments.length === 0);
      if (!constant || emptyCollection) found.push(name);
    }
  }
  return found;
}

/** The first argument of every memo maker called in the file. */
function memoNames(file: ts.SourceFile): string[] {
  const names: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      MAKERS.has(node.expression.text)
    ) {
      const [first] = node.arguments;
      names.push(first !== undefined && ts.isStringLiteral(first) ? first.text : "<not a literal>");
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return names;
}

describe("the memos of src/", () => {
  it("are made only through src/memos: no module keeps state of its own", () => {
    const state = parsed.flatMap(({ path, file }) =>
      moduleState(file).map((name) => `${path}: ${name}`),
    );
    expect(state).toEqual([]);
  });

  it("each named once, by an entry of the table, and every entry used", () => {
    const used = parsed.flatMap(({ file }) => memoNames(file));
    expect(used.filter((name, i) => used.indexOf(name) !== i)).toEqual([]);
    expect([...used].sort()).toEqual(Object.keys(MEMOS).sort());
  });

  it("the rule catches what it is meant to", () => {
    const file = ts.createSourceFile(
      "probe.ts",
      "let a = 1;\nconst b = new Map();\nconst c = new Set([1]);\nconst d = new WeakMap<object, 1>();\n" +
        "const e: ReadonlySet<number> = new Set();",
      ts.ScriptTarget.Latest,
    );
    expect(moduleState(file)).toEqual(["a", "b", "d"]);
  });

  it("counts entries and empties on clear", () => {
    const map = memoMap<string, number>("chat.templates");
    const slot = memoSlot<number>("openai.served-since");
    const weak = memoWeak<object, number>("fraud.rules");
    const key = {};
    map.set("a", 1);
    slot.value = 7;
    weak.set(key, 1);
    const entries = new Map(memoEntries().map(({ name, entries }) => [name, entries]));
    expect(entries.get("chat.templates")).toBe(1);
    expect(entries.get("openai.served-since")).toBe(1);
    expect(entries.get("fraud.rules")).toBeUndefined();
    clearMemos();
    expect([map.size, slot.value, weak.get(key)]).toEqual([0, undefined, undefined]);
  });
});
