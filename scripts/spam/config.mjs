// Shared constants of the spam pipeline; the manifest publishes the same values
// so the edge truncates and pads exactly like training did.
export const MODEL_DIR = 'models/spam-classifier';
export const CACHE_DIR = '.cache/spam';
export const MAX_CHARS = 4096; // prepareText(text, MAX_CHARS) before tokenizing
export const MAX_LENGTH = 1024; // first MAX_LENGTH token ids go to the model
export const PAD_TOKEN_ID = 0;
