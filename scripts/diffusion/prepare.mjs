// Step 1 of scripts/diffusion/build.sh: the data the Python side trains on, and the tokenizer.
//   - .cache/diffusion/{train,test}.f32 (N x 784 float32, ink = 1) + {train,test}.labels.u8,
//     from scripts/lib/mnist-split.mjs (training digits only are ever trained on);
//   - models/digit-diffusion/tokenizer.json + tokenizer_config.json: a byte-level BPE
//     (scripts/lib/byte-level-bpe.mjs) trained on the TRAINING phrasings only, with a
//     Lowercase normalizer (and `do_lower_case: true` in the config for loaders that
//     lower-case themselves); no post-processor: prompts are encoded without special tokens;
//   - .cache/diffusion/prompts.json: every phrasing with its ids, padded to PROMPT_LENGTH,
//     split into training and held-out by the committed held-out list.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer as JsTokenizer } from "@huggingface/tokenizers";
import tokenizers from "tokenizers";
import { byteLevelPipeline, trainByteLevelBpe } from "../lib/byte-level-bpe.mjs";
import { loadMnistSplit } from "../lib/mnist-split.mjs";
import { allPhrasings, readHeldOut } from "./phrasings.mjs";

const { BPE, Tokenizer } = tokenizers;
export const MODEL_DIR = "models/digit-diffusion";
const CACHE = ".cache/diffusion";
const PAD = "<|pad|>";
const VOCAB_SIZE = 320;
const PROMPT_LENGTH = 16;

mkdirSync(CACHE, { recursive: true });
mkdirSync(MODEL_DIR, { recursive: true });

const { train, test } = loadMnistSplit();
for (const [name, rows] of [
  ["train", train],
  ["test", test],
]) {
  const pixels = new Float32Array(rows.length * 784);
  rows.forEach((row, i) => pixels.set(row.pixels, i * 784));
  writeFileSync(join(CACHE, `${name}.f32`), Buffer.from(pixels.buffer));
  writeFileSync(join(CACHE, `${name}.labels.u8`), Uint8Array.from(rows.map((r) => r.label)));
}

const heldOutTexts = new Set(readHeldOut().map((p) => p.text));
const phrasings = allPhrasings();
const trainingPhrasings = phrasings.filter((p) => !heldOutTexts.has(p.text));
if (phrasings.length - trainingPhrasings.length !== heldOutTexts.size)
  throw new Error("held-out list does not match the grammar");

// Lower-cased training phrasings, each on its own line, repeated so merges reflect prompt words.
const corpus = trainingPhrasings.map((p) => p.text.toLowerCase()).join("\n");
const { vocab, merges } = trainByteLevelBpe(corpus, [PAD], VOCAB_SIZE);
const tokenizer = byteLevelPipeline(BPE.init(vocab, merges, {}));
tokenizer.addSpecialTokens([PAD]);
const tokenizerPath = join(MODEL_DIR, "tokenizer.json");
tokenizer.save(tokenizerPath, true);
const json = JSON.parse(readFileSync(tokenizerPath, "utf8"));
json.normalizer = { type: "Lowercase" };
json.decoder = { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true };
writeFileSync(tokenizerPath, `${JSON.stringify(json, null, 2)}\n`);
const tokenizerConfig = {
  tokenizer_class: "PreTrainedTokenizerFast",
  pad_token: PAD,
  do_lower_case: true,
  add_bos_token: false,
  add_eos_token: false,
  model_max_length: PROMPT_LENGTH,
};
writeFileSync(
  join(MODEL_DIR, "tokenizer_config.json"),
  `${JSON.stringify(tokenizerConfig, null, 2)}\n`,
);

const rust = Tokenizer.fromFile(tokenizerPath);
const js = new JsTokenizer(JSON.parse(readFileSync(tokenizerPath, "utf8")), tokenizerConfig);
async function encode(text) {
  const ids = (await rust.encode(text, null, { addSpecialTokens: false })).getIds();
  const jsIds = js.encode(text, { add_special_tokens: false }).ids;
  if (ids.length !== jsIds.length || ids.some((v, i) => v !== jsIds[i]))
    throw new Error(`Rust/JS ids differ on "${text}"`);
  if (ids.length > PROMPT_LENGTH)
    throw new Error(`"${text}" is ${ids.length} tokens > ${PROMPT_LENGTH}`);
  return ids;
}
const rows = [];
let longest = 0;
for (const p of phrasings) {
  const ids = await encode(p.text);
  longest = Math.max(longest, ids.length);
  rows.push({ text: p.text, digit: p.digit, heldOut: heldOutTexts.has(p.text), ids });
}
// Mixed case is the same prompt.
if ((await encode("A Handwritten SEVEN")).join() !== (await encode("a handwritten seven")).join())
  throw new Error("not lower-cased");
writeFileSync(
  join(CACHE, "prompts.json"),
  JSON.stringify({
    promptLength: PROMPT_LENGTH,
    padTokenId: vocab[PAD],
    vocabSize: VOCAB_SIZE,
    longest,
    phrasings: rows,
  }),
);
console.log(
  `digits: ${train.length} train, ${test.length} held out; phrasings: ` +
    `${trainingPhrasings.length} train, ${heldOutTexts.size} held out; ` +
    `tokenizer ${VOCAB_SIZE} tokens, longest prompt ${longest} tokens`,
);
