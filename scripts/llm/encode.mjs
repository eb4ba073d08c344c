// Encodes the three splits with models/tiny-llm/tokenizer.json into CACHE_DIR:
//   {split}.bin    uint16 little-endian ids; each document is [<|bos|>, …text…, <|eos|>]
//   {split}.json   {documents: [{id, start, length}]} offsets into the .bin
//   prompts.json   candidate fixture prompts for scripts/llm/export.py: <|bos|> + the start of
//                  the first sentence of every test document, cut at 8..24 tokens (varied by
//                  document, so a batch of two prompts needs left padding)
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import tokenizers from "tokenizers";
import { loadSplits } from "./corpus.mjs";
import { CACHE_DIR, EOS, MODEL_DIR } from "./config.mjs";

const tokenizer = tokenizers.Tokenizer.fromFile(join(MODEL_DIR, "tokenizer.json"));
const eos = tokenizer.tokenToId(EOS);
mkdirSync(CACHE_DIR, { recursive: true });
const splits = loadSplits();
for (const [split, docs] of Object.entries(splits)) {
  const ids = [];
  const documents = [];
  for (const doc of docs) {
    const encoded = (await tokenizer.encode(doc.text, null, { addSpecialTokens: true })).getIds();
    documents.push({ id: doc.id, start: ids.length, length: encoded.length + 1 });
    ids.push(...encoded, eos);
  }
  writeFileSync(join(CACHE_DIR, `${split}.bin`), Buffer.from(Uint16Array.from(ids).buffer));
  writeFileSync(join(CACHE_DIR, `${split}.json`), JSON.stringify({ documents }));
  console.log(`${split}: ${docs.length} documents, ${ids.length} tokens`);
}
const prompts = [];
for (const [i, doc] of splits.test.entries()) {
  const cut = 1 + 8 + ((i * 5) % 17);
  const ids = (await tokenizer.encode(doc.sentences[0], null, { addSpecialTokens: true }))
    .getIds()
    .slice(0, cut);
  prompts.push({ document: doc.id, text: await tokenizer.decode(ids, true), ids });
}
writeFileSync(join(CACHE_DIR, "prompts.json"), JSON.stringify(prompts, null, 1));
