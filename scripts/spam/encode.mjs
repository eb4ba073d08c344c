// Encodes every split with the trained (Rust) tokenizer into .cache/spam/<split>.json
// as { ids: number[][], labels: number[] }: prepareText(MAX_CHARS), no special
// tokens, first MAX_LENGTH ids, exactly what the edge feeds the model.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import tokenizers from "tokenizers";
import { loadSplits, prepareText } from "./dataset.mjs";
import { CACHE_DIR, MAX_CHARS, MAX_LENGTH, MODEL_DIR } from "./config.mjs";

const tokenizer = tokenizers.Tokenizer.fromFile(join(MODEL_DIR, "tokenizer.json"));
mkdirSync(CACHE_DIR, { recursive: true });
for (const [split, rows] of Object.entries(loadSplits())) {
  const encodings = await tokenizer.encodeBatch(
    rows.map((r) => prepareText(r.text, MAX_CHARS)),
    { addSpecialTokens: false },
  );
  const ids = encodings.map((e) => e.getIds().slice(0, MAX_LENGTH));
  const truncated = encodings.filter((e) => e.getLength() > MAX_LENGTH).length;
  writeFileSync(
    join(CACHE_DIR, `${split}.json`),
    JSON.stringify({ ids, labels: rows.map((r) => r.label) }),
  );
  console.log(`${split}: ${rows.length} texts, ${truncated} longer than ${MAX_LENGTH} tokens`);
}
