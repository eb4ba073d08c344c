// Trains the spam classifier's tokenizer on the TRAIN split only and writes
// models/spam-classifier/tokenizer.json (+ tokenizer_config.json).
//
// Design: byte-level BPE (GPT-2 style pre-tokenizer regex, no normalizer, no
// post-processor). Byte-level means every input string is representable, so
// nothing is ever <unk>, and it is the pipeline the pure-JS
// @huggingface/tokenizers reproduces exactly (checked below on every held-out
// text). No lowercasing on purpose: SHOUTING is a spam signal, and case mapping
// is where Rust and JS disagree (e.g. Greek final sigma).
//
// The Node binding of `tokenizers` only exposes `train(files)` with the model's
// default trainer (vocab 30k). BPE training is greedy, so the first K merges of
// a 30k run are exactly what a K-merge run would produce: we train once and
// keep the first VOCAB_SIZE - 2 - 256 merges.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer as JsTokenizer } from "@huggingface/tokenizers";
import tokenizers from "tokenizers";
import { byteLevelPipeline, trainByteLevelBpe } from "../lib/byte-level-bpe.mjs";
import { loadSplits, prepareText } from "./dataset.mjs";
import { MAX_CHARS, MODEL_DIR } from "./config.mjs";

const { BPE, Tokenizer } = tokenizers;

const VOCAB_SIZE = 8000;
const SPECIAL_TOKENS = ["<pad>", "<unk>"]; // ids 0 and 1; the edge pads with id 0

// 1. BPE on the train texts (separated by blank lines; the trainer reads line by line,
//    which is fine for counting): specials, the 256 byte symbols, then the first merges.
const { train, validation, test } = loadSplits();
const { vocab, merges } = trainByteLevelBpe(
  train.map((r) => r.text).join("\n\n"),
  SPECIAL_TOKENS,
  VOCAB_SIZE,
);
const tokenizer = byteLevelPipeline(BPE.init(vocab, merges, { unkToken: "<unk>" }));
tokenizer.addSpecialTokens(SPECIAL_TOKENS);

mkdirSync(MODEL_DIR, { recursive: true });
const tokenizerPath = join(MODEL_DIR, "tokenizer.json");
tokenizer.save(tokenizerPath, true);
// tokenizer_config.json: the JS library reads the pad/unk tokens from it.
const tokenizerConfig = {
  tokenizer_class: "PreTrainedTokenizerFast",
  pad_token: "<pad>",
  unk_token: "<unk>",
};
writeFileSync(
  join(MODEL_DIR, "tokenizer_config.json"),
  `${JSON.stringify(tokenizerConfig, null, 2)}\n`,
);
console.log(
  `tokenizer: byte-level BPE, ${tokenizer.getVocabSize(true)} tokens -> ${tokenizerPath}`,
);

// 3. Parity gate: the Rust tokenizer as saved vs. the edge's pure-JS tokenizer
//    on every held-out text, after the edge's exact character truncation.
const rust = Tokenizer.fromFile(tokenizerPath);
const js = new JsTokenizer(JSON.parse(readFileSync(tokenizerPath, "utf8")), tokenizerConfig);
let mismatches = 0;
const heldOut = [...validation, ...test];
for (const { id, text } of heldOut) {
  const input = prepareText(text, MAX_CHARS);
  const expected = (await rust.encode(input, null, { addSpecialTokens: false })).getIds();
  const actual = js.encode(input, { add_special_tokens: false }).ids;
  if (expected.length !== actual.length || expected.some((v, i) => v !== actual[i])) {
    mismatches += 1;
    if (mismatches <= 3) console.error(`mismatch on ${id}`);
  }
}
console.log(`JS vs Rust tokenizer mismatches: ${mismatches} / ${heldOut.length} held-out texts`);
if (mismatches > 0) process.exit(1);
