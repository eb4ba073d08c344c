// Shared constants of the spam pipeline; the manifest publishes the same values so the edge
// truncates and pads exactly like training did. The SPAM_* variables exist for model-selection
// experiments only, e.g. shorter inputs:
//   SPAM_CACHE_DIR=.cache/spam-short SPAM_MAX_CHARS=4096 SPAM_MAX_LENGTH=1024 node scripts/spam/encode.mjs
//   SPAM_CACHE_DIR=.cache/spam-short /usr/bin/python3 scripts/spam/train.py --member 1   (and 2, 3, then --select)
const env = (name, fallback) => (process.env[name] ? process.env[name] : fallback);
export const MODEL_DIR = "models/spam-classifier";
export const CACHE_DIR = env("SPAM_CACHE_DIR", ".cache/spam");
// prepareText(text, MAX_CHARS) before tokenizing
export const MAX_CHARS = Number(env("SPAM_MAX_CHARS", 8192));
// first MAX_LENGTH token ids go to the model
export const MAX_LENGTH = Number(env("SPAM_MAX_LENGTH", 2048));
export const PAD_TOKEN_ID = 0;
