// Shared constants of the tiny LLM pipeline (scripts/llm/*); train.py reads the same
// values from the files these scripts write, and the manifest publishes them.
export const MODEL_DIR = 'models/tiny-llm';
export const CACHE_DIR = process.env.LLM_CACHE_DIR || '.cache/llm';
export const VOCAB_SIZE = 4096;
// Special tokens take ids 0..6 in this order: pad, bos, eos, then the chat markers.
export const SPECIAL_TOKENS = ['<|pad|>', '<|bos|>', '<|eos|>', '<|system|>', '<|user|>', '<|assistant|>', '<|end|>'];
export const BOS = '<|bos|>';
export const EOS = '<|eos|>';
export const PAD = '<|pad|>';
