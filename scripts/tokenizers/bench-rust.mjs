// The Rust `tokenizers` binding's side of scripts/bench-tokenizers.mjs, in a process of its
// own started with UV_THREADPOOL_SIZE=1 and RAYON_NUM_THREADS=1 (single-threaded).
// Reads {json, documents, repeat} on stdin; prints {loadMs, encodeMs, decodeMs, tokens}.
import tokenizers from "tokenizers";

const input = JSON.parse(
  await new Promise((resolve) => {
    let text = "";
    process.stdin.on("data", (chunk) => (text += chunk));
    process.stdin.on("end", () => resolve(text));
  }),
);
let started = performance.now();
const rust = tokenizers.Tokenizer.fromFile(input.json);
const loadMs = performance.now() - started;
// Warm-up, then the timed passes (the batch APIs: no per-call thread hop in the timing).
let encodings = await rust.encodeBatch(input.documents.slice(0, 50), { addSpecialTokens: false });
started = performance.now();
for (let r = 0; r < input.repeat; r++)
  encodings = await rust.encodeBatch(input.documents, { addSpecialTokens: false });
const encodeMs = (performance.now() - started) / input.repeat;
const ids = encodings.map((encoding) => encoding.getIds());
await rust.decodeBatch(ids.slice(0, 50), false);
started = performance.now();
for (let r = 0; r < input.repeat; r++) await rust.decodeBatch(ids, false);
const decodeMs = (performance.now() - started) / input.repeat;
console.log(
  JSON.stringify({
    loadMs,
    encodeMs,
    decodeMs,
    tokens: ids.reduce((n, list) => n + list.length, 0),
    rss: process.memoryUsage().rss,
  }),
);
