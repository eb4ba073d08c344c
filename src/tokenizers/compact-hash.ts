// The compact tokenizer's table hashes; scripts/tokenizers/hashes.mjs builds the tables
// with the same functions (change both together, and the format version).

/** FNV-1a over bytes[start, end). */
export function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ (bytes[i] ?? 0), 0x01000193);
  return (h ^ (h >>> 15)) >>> 0;
}

/** Mixes a pair of token ids. */
export function hashPair(a: number, b: number): number {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca77);
  h = Math.imul(h ^ (h >>> 16), 0x21f0aaad);
  return (h ^ (h >>> 15)) >>> 0;
}
