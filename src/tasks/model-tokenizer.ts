// One tokenizer per model file per isolate, shared by every task that reads it (classification,
// generation, /tokenize), read verified from the model's own files.
import { memoWeak } from "../memos";
import type { RegisteredModel } from "./registered-model";
import { loadTextTokenizer } from "../tokenizers/load";
import type { TextTokenizer } from "../tokenizers/tokenizer";

type FileReader = RegisteredModel["readFile"];

const loaded = memoWeak<FileReader, Map<string, Promise<TextTokenizer>>>(
  "text-generation.tokenizers",
);

/**
 * The tokenizer in `spec.file` of this model, loaded at most once per isolate.
 *
 * Keyed by the model's file reader, so a registry that reads from R2 never sees a tokenizer another
 * registry loaded from the bundle. A failed load is not kept, so the next request tries again (e.g.
 * R2 was briefly down).
 */
export function modelTokenizer(
  model: Pick<RegisteredModel, "readFile">,
  spec: { file: string; sha256: string },
): Promise<TextTokenizer> {
  let files = loaded.get(model.readFile);
  if (files === undefined) {
    files = new Map();
    loaded.set(model.readFile, files);
  }
  const key = `${spec.sha256}:${spec.file}`;
  const cached = files.get(key);
  if (cached !== undefined) return cached;
  const loading = model
    .readFile(spec.file, spec.sha256)
    .then((bytes) => loadTextTokenizer(spec.file, bytes));
  const owner = files;
  loading.catch(() => {
    if (owner.get(key) === loading) owner.delete(key);
  });
  files.set(key, loading);
  return loading;
}
