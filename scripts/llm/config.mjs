// Shared constants of the tiny LLM pipeline (scripts/llm/*); train.py reads the same values from
// the files these scripts write, and the manifest publishes them. LLM_* variables exist for
// model-selection experiments only, e.g. another vocabulary:
//   LLM_VOCAB_SIZE=512 LLM_MODEL_DIR=.cache/v512 LLM_CACHE_DIR=.cache/v512 node scripts/llm/train-tokenizer.mjs
export const MODEL_DIR = process.env.LLM_MODEL_DIR || "models/tiny-llm";
export const CACHE_DIR = process.env.LLM_CACHE_DIR || ".cache/llm";
export const VOCAB_SIZE = Number(process.env.LLM_VOCAB_SIZE || 512);
// Special tokens take ids 0..6 in this order: pad, bos, eos, then the chat markers.
export const SPECIAL_TOKENS = [
  "<|pad|>",
  "<|bos|>",
  "<|eos|>",
  "<|system|>",
  "<|user|>",
  "<|assistant|>",
  "<|end|>",
];
export const BOS = "<|bos|>";
export const EOS = "<|eos|>";
export const PAD = "<|pad|>";
