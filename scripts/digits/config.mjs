// Shared constants of the digit classifier pipeline (scripts/digits/*).
export const MODEL_DIR = "models/digit-classifier";
export const CACHE_DIR = process.env.DIGITS_CACHE_DIR || ".cache/digits";
// Validation carved out of TRAINING (the held-out 2,000 are never tuned on): per digit the
// last VALIDATION_PER_DIGIT training samples (in file order).
export const VALIDATION_PER_DIGIT = 60;
// Static INT8 activation ranges are calibrated on this many training digits (every k-th).
export const CALIBRATION_SAMPLES = 2000;
