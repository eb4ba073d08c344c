// The edge tokenizer (the compact tokenizer.bin the manifest names, as the Worker loads it)
// must give the Rust `tokenizers` ids (from the source tokenizer.json) on every held-out
// text, after the same character and id truncation.
import { readFileSync } from "node:fs";
import tokenizers from "tokenizers";
import { describe, expect, it } from "vitest";
import { TextClassificationSchema } from "../../../src/models/manifest";
import { encodeBatch, encodeText } from "../../../src/tokenizers/batch";
import { loadTextTokenizer } from "../../../src/tokenizers/load";
import { loadSplits, prepareText } from "../../../scripts/spam/dataset.mjs";

const dir = "models/spam-classifier";
const manifest = TextClassificationSchema.parse(
  JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8")),
);
const edge = loadTextTokenizer(
  manifest.tokenizer.file,
  readFileSync(`${dir}/${manifest.tokenizer.file}`),
);
const rust = tokenizers.Tokenizer.fromFile(`${dir}/tokenizer.json`);
const splits: { validation: { id: string; text: string }[]; test: { id: string; text: string }[] } =
  loadSplits();
const { validation, test } = splits;

describe("edge tokenizer vs Rust tokenizers", () => {
  it("gives identical ids on every held-out text", async () => {
    const heldOut = [...validation, ...test];
    expect(heldOut.length).toBeGreaterThan(500);
    const mismatched: string[] = [];
    for (const { id, text } of heldOut) {
      const expected = (
        await rust.encode(prepareText(text, manifest.tokenizer.maxChars), null, {
          addSpecialTokens: false,
        })
      )
        .getIds()
        .slice(0, manifest.tokenizer.maxLength);
      if (
        JSON.stringify(encodeText(edge, text, manifest.tokenizer).ids) !== JSON.stringify(expected)
      )
        mismatched.push(id);
    }
    expect(mismatched).toEqual([]);
  });

  it("pads a batch to its longest text with a 1/0 attention mask", () => {
    const batch = encodeBatch(
      edge,
      ["hello world", "a rather longer piece of text to encode"],
      manifest.tokenizer,
    );
    const [rows, columns] = batch.shape;
    expect(rows).toBe(2);
    expect(columns).toBe(Math.max(...batch.tokenCounts));
    const shortLength = batch.tokenCounts[0]!;
    expect(Array.from(batch.attentionMask.slice(0, columns), Number)).toEqual(
      Array.from({ length: columns }, (_, i) => (i < shortLength ? 1 : 0)),
    );
    expect(Number(batch.inputIds[columns - 1])).toBe(manifest.tokenizer.padTokenId);
  });
});
