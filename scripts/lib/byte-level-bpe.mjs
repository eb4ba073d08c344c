// Byte-level BPE training with the Rust `tokenizers` Node binding, shared by the spam
// classifier's and the tiny LLM's tokenizer scripts. The binding only exposes `train(files)`
// with the model's default trainer (vocab 30k); BPE training is greedy, so the first K
// merges of that run are exactly what a K-merge run would produce: train once, keep a prefix.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tokenizers from "tokenizers";

const { BPE, Tokenizer, byteLevelAlphabet, byteLevelPreTokenizer } = tokenizers;

/** A tokenizer around `model` with the GPT-2 byte-level pre-tokenizer (no normalizer). */
export function byteLevelPipeline(model) {
  const tokenizer = new Tokenizer(model);
  tokenizer.setPreTokenizer(byteLevelPreTokenizer(false, true));
  return tokenizer;
}

/**
 * Trains on `text` and returns the vocabulary and merges of a `vocabSize`-token byte-level
 * BPE: the special tokens first (their ids in order), the 256 byte symbols (so any input
 * is representable), then the first merges in rank order.
 */
export function trainByteLevelBpe(text, specialTokens, vocabSize) {
  const work = mkdtempSync(join(tmpdir(), "bpe-"));
  const corpusFile = join(work, "train.txt");
  writeFileSync(corpusFile, text);
  const trained = byteLevelPipeline(BPE.empty());
  trained.train([corpusFile]);
  trained.save(join(work, "trained.json"));
  const trainedMerges = JSON.parse(readFileSync(join(work, "trained.json"), "utf8")).model.merges;
  rmSync(work, { recursive: true, force: true });

  const vocab = {};
  for (const token of [...specialTokens, ...byteLevelAlphabet().sort()])
    vocab[token] = Object.keys(vocab).length;
  const merges = [];
  for (const [a, b] of trainedMerges) {
    if (Object.keys(vocab).length >= vocabSize) break;
    if (!(a + b in vocab)) vocab[a + b] = Object.keys(vocab).length;
    merges.push([a, b]);
  }
  return { vocab, merges };
}
