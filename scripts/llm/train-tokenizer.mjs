// Trains the tiny LLM's tokenizer on the TRAIN documents only and writes
// models/tiny-llm/tokenizer.json (+ tokenizer_config.json).
//
// Byte-level BPE (GPT-2 pre-tokenizer regex, no normalizer), VOCAB_SIZE tokens:
// the 7 special tokens (ids 0..6), the 256 byte symbols, then the first merges.
// A TemplateProcessing post-processor prepends <|bos|> when special tokens are
// added (Llama style: `encode(text, addSpecialTokens)` → [bos, …]); a ByteLevel
// decoder turns ids back into text. The Node binding of `tokenizers` trains with the
// model's default trainer only (vocab 30k); BPE training is greedy, so the first K
// merges of that run are exactly a K-merge run's (as scripts/spam/train-tokenizer.mjs).
// The binding has no ByteLevel decoder constructor, so it is written into the JSON and
// the file is reloaded and checked to round-trip every held-out document.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer as JsTokenizer } from "@huggingface/tokenizers";
import tokenizers from "tokenizers";
import { byteLevelPipeline, trainByteLevelBpe } from "../lib/byte-level-bpe.mjs";
import { loadSplits } from "./corpus.mjs";
import { BOS, EOS, MODEL_DIR, PAD, SPECIAL_TOKENS, VOCAB_SIZE } from "./config.mjs";

const { BPE, Tokenizer, templateProcessing } = tokenizers;

const { train, validation, test } = loadSplits();
const { vocab, merges } = trainByteLevelBpe(
  train.map((d) => d.sentences.join("\n")).join("\n"),
  SPECIAL_TOKENS,
  VOCAB_SIZE,
);
if (Object.keys(vocab).length !== VOCAB_SIZE)
  throw new Error(`vocab ${Object.keys(vocab).length} != ${VOCAB_SIZE}`);
const tokenizer = byteLevelPipeline(BPE.init(vocab, merges, {}));
tokenizer.addSpecialTokens(SPECIAL_TOKENS);
tokenizer.setPostProcessor(
  templateProcessing(`${BOS} $A`, `${BOS} $A ${BOS} $B`, [[BOS, vocab[BOS]]]),
);

mkdirSync(MODEL_DIR, { recursive: true });
const tokenizerPath = join(MODEL_DIR, "tokenizer.json");
tokenizer.save(tokenizerPath, true);
const json = JSON.parse(readFileSync(tokenizerPath, "utf8"));
json.decoder = { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true };
writeFileSync(tokenizerPath, `${JSON.stringify(json, null, 2)}\n`);
const tokenizerConfig = {
  tokenizer_class: "PreTrainedTokenizerFast",
  bos_token: BOS,
  eos_token: EOS,
  pad_token: PAD,
  add_bos_token: true,
  add_eos_token: false,
  model_max_length: 512,
};
writeFileSync(
  join(MODEL_DIR, "tokenizer_config.json"),
  `${JSON.stringify(tokenizerConfig, null, 2)}\n`,
);
console.log(`tokenizer: byte-level BPE, ${VOCAB_SIZE} tokens -> ${tokenizerPath}`);

// Checks: Rust round trip and the pure-JS tokenizer's ids on every held-out document.
const rust = Tokenizer.fromFile(tokenizerPath);
const js = new JsTokenizer(JSON.parse(readFileSync(tokenizerPath, "utf8")), tokenizerConfig);
let failures = 0;
for (const { id, text } of [...validation, ...test]) {
  const ids = (await rust.encode(text, null, { addSpecialTokens: true })).getIds();
  const jsIds = js.encode(text, { add_special_tokens: true }).ids;
  const back = await rust.decode(ids, true);
  const sameIds = ids.length === jsIds.length && ids.every((v, i) => v === jsIds[i]);
  if (ids[0] !== vocab[BOS] || back !== text || !sameIds) {
    failures += 1;
    if (failures <= 3)
      console.error(
        `check failed on ${id}: bos ${ids[0]}, roundtrip ${back === text}, js ${sameIds}`,
      );
  }
}
console.log(`held-out documents failing the round-trip / JS-parity check: ${failures}`);
if (failures > 0) process.exit(1);
