// Builds a model's compact tokenizer (tokenizer.bin) from its Hugging Face tokenizer.json
// (+ tokenizer_config.json) and points the model's manifest at it, with its sha256 and size;
// the JSON stays beside it as the source and the Rust reference.
//   node scripts/build-tokenizer.mjs models/spam-classifier [models/tiny-llm …]
//   node scripts/build-tokenizer.mjs --json path/tokenizer.json --out path/tokenizer.bin
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { compileTokenizer } from "./tokenizers/compile.mjs";

function build(jsonPath, outPath) {
  const configPath = join(dirname(jsonPath), "tokenizer_config.json");
  const config = existsSync(configPath) ? JSON.parse(readFileSync(configPath, "utf8")) : {};
  const started = performance.now();
  const bytes = compileTokenizer(JSON.parse(readFileSync(jsonPath, "utf8")), config);
  writeFileSync(outPath, bytes);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  console.log(
    `${outPath}: ${bytes.length} bytes, sha256 ${sha256} ` +
      `(${(performance.now() - started).toFixed(0)} ms from ${jsonPath})`,
  );
  return { sha256, bytes: bytes.length };
}

const args = process.argv.slice(2);
if (args[0] === "--json") {
  build(args[1], args[args.indexOf("--out") + 1]);
} else {
  for (const dir of args) {
    const built = build(join(dir, "tokenizer.json"), join(dir, "tokenizer.bin"));
    const manifestPath = join(dir, "manifest.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    if (manifest.tokenizer === undefined) continue;
    const source = createHash("sha256")
      .update(readFileSync(join(dir, "tokenizer.json")))
      .digest("hex");
    manifest.tokenizer = {
      ...manifest.tokenizer,
      file: "tokenizer.bin",
      sha256: built.sha256,
      bytes: built.bytes,
      source: { file: "tokenizer.json", sha256: source },
    };
    writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    console.log(`${manifestPath}: tokenizer -> tokenizer.bin`);
  }
}
