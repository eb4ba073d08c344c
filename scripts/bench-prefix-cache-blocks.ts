// What keeping a prompt's blocks costs the decoder engine, in-process (bench-prefix-cache.mjs
// runs it): PrefixCache.insert of a prompt whose first block was never seen (the doorkeeper:
// one hash, nothing kept), of one whose first block was seen before and none of whose blocks
// are cached (hash, find, copy of each block's keys/values: the cost of keeping), and of one
// whose blocks all are (hash, find, touch); and a lookup that misses. The tiny LLM's shape, the
// default 64 MiB budget, full and evicting. Prints one JSON line: ms per prompt.
//   tsx scripts/bench-prefix-cache-blocks.ts [tokens=448]
import { PrefixCache, PromptBlocks } from "../origin/engines/decoder/prefix-cache";

const tokens = Number(process.argv[2] ?? 448);
const shape = { layers: 4, kvHeads: 3, headDim: 64 };
const cache = new PrefixCache(shape, 64 << 20);
const presents = Array.from({ length: shape.layers * 2 }, () =>
  new Float32Array(shape.kvHeads * tokens * shape.headDim).fill(0.5),
);
const segments = [{ data: presents, row: 0, length: tokens, from: 0, count: tokens }];
let state = 1;
const prompts = (count: number) =>
  Array.from({ length: count }, () =>
    Array.from(
      { length: tokens },
      () => 7 + ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) % 505),
    ),
  );
const time = (prompts: number[][], run: (prompt: number[]) => void) => {
  const started = performance.now();
  for (const prompt of prompts) run(prompt);
  return (performance.now() - started) / prompts.length;
};

const seenTwice = (batch: number[][]) => {
  // remembered by the doorkeeper
  for (const prompt of batch) cache.insert(new PromptBlocks(prompt), segments);
  return batch;
};
// fills the cache: later inserts evict
time(seenTwice(prompts(1000)), (prompt) => cache.insert(new PromptBlocks(prompt), segments));
const unseen = time(prompts(2000), (prompt) => cache.insert(new PromptBlocks(prompt), segments));
const kept = time(seenTwice(prompts(2000)), (prompt) =>
  cache.insert(new PromptBlocks(prompt), segments),
);
const [cachedPrompt] = seenTwice(prompts(1));
cache.insert(new PromptBlocks(cachedPrompt!), segments);
const cached = time(
  Array.from({ length: 2000 }, () => cachedPrompt!),
  (prompt) => cache.insert(new PromptBlocks(prompt), segments),
);
const missed = time(prompts(2000), (prompt) => cache.match(new PromptBlocks(prompt)));
console.log(
  JSON.stringify({
    tokens,
    insertUnseenMs: unseen,
    insertNewMs: kept,
    insertCachedMs: cached,
    matchMissMs: missed,
    cacheBytes: cache.bytes,
  }),
);
