// Outcome 2 of issue 9: on every string of the seeded corpus (scripts/tokenizers/corpus.mjs,
// ≥ 5,000 strings), the compact edge tokenizer — the form the Worker loads — gives the
// Rust `tokenizers` binding's ids, and decoding those ids gives the binding's text, for
// each reference tokenizer. Special-token strings typed by a user (parseSpecialTokens:
// false) must come out as ordinary text ids: the reference is the binding loaded without
// the special tokens (what its `encode_special_tokens` does), and no special id may appear.
import { existsSync, readFileSync } from "node:fs";
import tokenizers from "tokenizers";
import { describe, expect, it } from "vitest";
import { CompactTokenizer } from "../../src/tokenizers/compact-tokenizer";
import { buildCorpus } from "../../scripts/tokenizers/corpus.mjs";
import {
  REFERENCE_TOKENIZERS,
  compactTokenizer,
  tokenizerFiles,
} from "../../scripts/tokenizers/sources.mjs";

const corpus: { kind: string; text: string }[] = buildCorpus();
const BATCH = 256;

interface AddedTokenJson {
  content: string;
  special: boolean;
}

async function rustIds(
  rust: tokenizers.Tokenizer,
  texts: readonly string[],
  addSpecialTokens: boolean,
): Promise<number[][]> {
  const out: number[][] = [];
  for (let i = 0; i < texts.length; i += BATCH) {
    const encodings = await rust.encodeBatch(texts.slice(i, i + BATCH), { addSpecialTokens });
    for (const encoding of encodings) out.push(encoding.getIds());
  }
  return out;
}

async function rustTexts(
  rust: tokenizers.Tokenizer,
  ids: number[][],
  skipSpecialTokens: boolean,
): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < ids.length; i += BATCH)
    out.push(...(await rust.decodeBatch(ids.slice(i, i + BATCH), skipSpecialTokens)));
  return out;
}

/** The first few strings whose results differ, to show in a failure. */
function mismatches<T>(
  texts: readonly string[],
  expected: readonly T[],
  actual: readonly T[],
): string[] {
  const bad: string[] = [];
  expected.forEach((value, i) => {
    if (JSON.stringify(value) !== JSON.stringify(actual[i]))
      bad.push(`${i}: ${JSON.stringify(texts[i]?.slice(0, 80))}`);
  });
  return bad.slice(0, 5);
}

/** The reference tokenizers, plus our own models' tokenizers (the tiny LLM's once it is merged). */
const TOKENIZERS: Record<string, string> = {
  ...REFERENCE_TOKENIZERS,
  "spam-classifier": "models/spam-classifier",
};
const TINY_LLM = process.env.TINY_LLM_TOKENIZER_DIR ?? "models/tiny-llm";
if (existsSync(`${TINY_LLM}/tokenizer.json`)) TOKENIZERS["tiny-llm"] = TINY_LLM;

/**
 * Llama 3.1 shares Llama 3's vocabulary and pre-tokenizer: only its BOS template and special tokens
 * are checked.
 */
const FULL_CORPUS = new Set([
  "llama3",
  "qwen3",
  "gemma3",
  "deepseek-v3",
  "gpt-oss",
  "spam-classifier",
  "tiny-llm",
]);

describe("the seeded corpus", () => {
  it("has ≥ 5,000 strings of every kind the issue lists", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(5000);
    const kinds = new Set(corpus.map((entry) => entry.kind));
    for (const kind of [
      "mail",
      "brown",
      "script",
      "cjk",
      "emoji",
      "combining",
      "rtl",
      "whitespace",
      "code",
      "digits",
      "long",
      "special",
      "surrogate",
    ]) {
      expect(kinds).toContain(kind);
    }
  });
});

describe.each(Object.entries(TOKENIZERS))(
  "compact %s vs the Rust tokenizers binding",
  (name, dir) => {
    const files = tokenizerFiles(dir);
    const rust = tokenizers.Tokenizer.fromFile(files.json);
    const edge = new CompactTokenizer(compactTokenizer(dir));
    const texts = corpus.map((entry) => entry.text);

    it.runIf(FULL_CORPUS.has(name))(
      "encodes every corpus string to the same ids and decodes them to the same text",
      async () => {
        const expected = await rustIds(rust, texts, false);
        expect(
          mismatches(
            texts,
            expected,
            texts.map((text) => edge.encode(text)),
          ),
        ).toEqual([]);
        const decoded = await rustTexts(rust, expected, false);
        expect(
          mismatches(
            texts,
            decoded,
            expected.map((ids) => edge.decode(ids)),
          ),
        ).toEqual([]);
      },
    );

    it(
      "adds BOS/EOS as the post-processor says, and " +
        "skips special tokens in decode as Rust does",
      async () => {
        const sample = texts.filter((_, i) => i % 10 === 0 || corpus[i]?.kind === "special");
        const expected = await rustIds(rust, sample, true);
        expect(
          mismatches(
            sample,
            expected,
            sample.map((text) => edge.encode(text, { addSpecialTokens: true })),
          ),
        ).toEqual([]);
        const decoded = await rustTexts(rust, expected, true);
        expect(
          mismatches(
            sample,
            decoded,
            expected.map((ids) => edge.decode(ids, { skipSpecialTokens: true })),
          ),
        ).toEqual([]);
      },
    );

    it("keeps special-token strings as text with parseSpecialTokens: false", async () => {
      const json: { added_tokens: AddedTokenJson[] } = JSON.parse(readFileSync(files.json, "utf8"));
      const special = new Set(
        json.added_tokens.filter((t) => t.special).map((t) => edge.tokenToId(t.content)),
      );
      const plain = tokenizers.Tokenizer.fromString(
        JSON.stringify({ ...json, added_tokens: json.added_tokens.filter((t) => !t.special) }),
      );
      const sample = [
        ...texts.filter((_, i) => corpus[i]?.kind === "special"),
        ...json.added_tokens
          .filter((t) => t.special)
          .slice(0, 50)
          .map((t) => `user text ${t.content}system\n${t.content}`),
      ];
      // Without the special tokens the binding renumbers the added tokens after them: map back by
      // content.
      const renumbered = (id: number): number => rust.tokenToId(plain.idToToken(id) ?? "") ?? -1;
      const expected = (await rustIds(plain, sample, false)).map((ids) => ids.map(renumbered));
      const actual = sample.map((text) => edge.encode(text, { parseSpecialTokens: false }));
      expect(mismatches(sample, expected, actual)).toEqual([]);
      expect(actual.flat().filter((id) => special.has(id))).toEqual([]);
      // The same strings do become control tokens when they are template markup.
      expect(edge.encode(sample.at(-1) ?? "").some((id) => special.has(id))).toBe(true);
    });
  },
);
