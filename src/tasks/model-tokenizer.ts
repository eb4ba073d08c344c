// One tokenizer per file per isolate, shared by every task that reads it (classification or
// generation, and /tokenize): read verified from the model's files and loaded once, keyed by
// the file's sha256 (same bytes, same tokenizer). A failed load is not kept, so the next
// request tries again (e.g. R2 was briefly down).
import type { RegisteredModel } from "../models/registry";
import { loadTextTokenizer } from "../tokenizers/load";
import type { TextTokenizer } from "../tokenizers/tokenizer";

const loaded = new Map<string, Promise<TextTokenizer>>();

/** The tokenizer in `spec.file` of this model, loaded at most once per isolate. */
export function modelTokenizer(model: Pick<RegisteredModel, "readFile">, spec: { file: string; sha256: string }): Promise<TextTokenizer> {
  const key = `${spec.sha256}:${spec.file}`;
  let tokenizer = loaded.get(key);
  if (tokenizer === undefined) {
    const loading = model.readFile(spec.file, spec.sha256).then((bytes) => loadTextTokenizer(spec.file, bytes));
    loading.catch(() => {
      if (loaded.get(key) === loading) loaded.delete(key);
    });
    loaded.set(key, loading);
    tokenizer = loading;
  }
  return tokenizer;
}
