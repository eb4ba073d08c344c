// The hash functions of the compact tokenizer's tables. src/tokenizers/compact-hash.ts
// computes the same values at the edge: change both together (the format version too).

/** FNV-1a over bytes[start, end). */
export function hashBytes(bytes, start, end) {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return (h ^ (h >>> 15)) >>> 0;
}

/** Mixes a pair of token ids. */
export function hashPair(a, b) {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca77);
  h = Math.imul(h ^ (h >>> 16), 0x21f0aaad);
  return (h ^ (h >>> 15)) >>> 0;
}

/** Open-addressing table size: a power of two, at most ~2/3 full. */
export function tableSize(entries) {
  let size = 1;
  while (size < entries * 1.5) size *= 2;
  return size;
}
