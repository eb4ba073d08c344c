// Compiles a Hugging Face tokenizer.json (+ tokenizer_config.json) into the compact form
// the edge loads without parsing the vocabulary (src/tokenizers/compact-format.ts reads it):
//   "TKZ1" | u32 header length | header JSON (settings, added tokens, section table) |
//   4-byte aligned sections: token bytes, token offsets, vocab hash table, merges, merge
//   hash table — typed-array views over the file, no copy.
// Byte-level models store each token as the bytes it stands for (the GPT-2 byte alphabet
// undone), so encoding works on UTF-8 bytes and decoding is a copy.
import { escapeLiteral, onigurumaToJs } from "./oniguruma-to-js.mjs";
import { hashBytes, hashPair, tableSize } from "./hashes.mjs";

/** GPT-2's byte ↔ printable-character map (Rust tokenizers: pre_tokenizers/byte_level.rs). */
export function byteLevelAlphabet() {
  const bytes = [];
  for (let b = 0x21; b <= 0x7e; b++) bytes.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bytes.push(b);
  for (let b = 0xae; b <= 0xff; b++) bytes.push(b);
  const chars = bytes.map((b) => b);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bytes.includes(b)) {
      bytes.push(b);
      chars.push(256 + n++);
    }
  }
  const charToByte = new Map();
  bytes.forEach((b, i) => charToByte.set(String.fromCodePoint(chars[i]), b));
  return charToByte;
}

const GPT2_PATTERN =
  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

function normalizerSteps(node) {
  if (node === null || node === undefined) return [];
  switch (node.type) {
    case "Sequence":
      return node.normalizers.flatMap(normalizerSteps);
    case "NFC":
    case "NFD":
    case "NFKC":
    case "NFKD":
      return [{ type: "unicode", form: node.type }];
    case "Lowercase":
      return [{ type: "lowercase" }];
    case "Prepend":
      return [{ type: "prepend", text: node.prepend }];
    case "Replace":
      if (!("String" in node.pattern))
        throw new Error("Replace normalizer with a regex is not supported");
      return [{ type: "replace", from: node.pattern.String, to: node.content }];
    default:
      throw new Error(`normalizer ${node.type} is not supported`);
  }
}

const BEHAVIORS = {
  Isolated: "isolated",
  MergedWithPrevious: "mergedWithPrevious",
  MergedWithNext: "mergedWithNext",
  Removed: "removed",
};

function preTokenizerSteps(node) {
  if (node === null || node === undefined) return [];
  switch (node.type) {
    case "Sequence":
      return node.pretokenizers.flatMap(preTokenizerSteps);
    case "Split": {
      if (node.invert) throw new Error("inverted Split is not supported");
      const behavior = BEHAVIORS[node.behavior];
      if (behavior === undefined)
        throw new Error(`Split behavior ${node.behavior} is not supported`);
      const source =
        "Regex" in node.pattern
          ? onigurumaToJs(node.pattern.Regex)
          : escapeLiteral(node.pattern.String);
      return [{ type: "split", pattern: source, behavior }];
    }
    case "ByteLevel": {
      const steps = [];
      if (node.add_prefix_space) steps.push({ type: "prefixSpace" });
      if (node.use_regex)
        steps.push({ type: "split", pattern: onigurumaToJs(GPT2_PATTERN), behavior: "isolated" });
      return steps;
    }
    default:
      throw new Error(`pre-tokenizer ${node.type} is not supported`);
  }
}

function decoderSteps(node) {
  if (node === null || node === undefined) return [];
  switch (node.type) {
    case "Sequence":
      return node.decoders.flatMap(decoderSteps);
    case "ByteLevel":
      return [{ type: "byteLevel" }];
    case "ByteFallback":
      return [{ type: "byteFallback" }];
    case "Fuse":
      return [{ type: "fuse" }];
    case "Replace":
      if (!("String" in node.pattern))
        throw new Error("Replace decoder with a regex is not supported");
      return [{ type: "replace", from: node.pattern.String, to: node.content }];
    case "Strip":
      return [{ type: "strip", content: node.content, start: node.start, stop: node.stop }];
    default:
      throw new Error(`decoder ${node.type} is not supported`);
  }
}

/** Ids the post-processor puts around a single sequence when special tokens are added. */
function postProcessor(node) {
  if (node === null || node === undefined) return { prefix: [], suffix: [] };
  switch (node.type) {
    case "Sequence": {
      const parts = node.processors.map(postProcessor);
      return { prefix: parts.flatMap((p) => p.prefix), suffix: parts.flatMap((p) => p.suffix) };
    }
    case "ByteLevel":
      return { prefix: [], suffix: [] };
    case "TemplateProcessing": {
      const prefix = [];
      const suffix = [];
      let seen = false;
      for (const piece of node.single) {
        if ("Sequence" in piece) seen = true;
        else (seen ? suffix : prefix).push(...node.special_tokens[piece.SpecialToken.id].ids);
      }
      return { prefix, suffix };
    }
    default:
      throw new Error(`post-processor ${node.type} is not supported`);
  }
}

function configToken(value) {
  if (typeof value === "string") return value;
  if (value !== null && typeof value === "object" && typeof value.content === "string")
    return value.content;
  return null;
}

/** Builds the compact bytes of one tokenizer. */
export function compileTokenizer(json, config = {}) {
  const model = json.model;
  if (model.type !== "BPE") throw new Error(`model ${model.type} is not supported`);
  if (model.dropout) throw new Error("BPE dropout is not supported");
  if (model.continuing_subword_prefix || model.end_of_word_suffix)
    throw new Error("subword prefixes/suffixes are not supported");
  const decoder = decoderSteps(json.decoder);
  const byteLevel = hasByteLevel(json.pre_tokenizer);
  const charToByte = byteLevelAlphabet();
  const encoder = new TextEncoder();

  // Token bytes by id.
  const entries = Object.entries(model.vocab);
  const size = entries.reduce((max, [, id]) => Math.max(max, id), -1) + 1;
  const tokenBytes = new Array(size).fill(new Uint8Array(0));
  for (const [token, id] of entries) {
    const chars = [...token];
    tokenBytes[id] =
      byteLevel && chars.every((c) => charToByte.has(c))
        ? Uint8Array.from(chars, (c) => charToByte.get(c))
        : encoder.encode(token);
  }
  const blobLength = tokenBytes.reduce((n, b) => n + b.length, 0);
  const blob = new Uint8Array(blobLength);
  const offsets = new Uint32Array(size + 1);
  let at = 0;
  tokenBytes.forEach((bytes, id) => {
    offsets[id] = at;
    blob.set(bytes, at);
    at += bytes.length;
  });
  offsets[size] = at;

  // Vocab hash table: bytes → id (first id wins on equal bytes).
  const vocabTable = new Int32Array(tableSize(entries.length)).fill(-1);
  const vocabMask = vocabTable.length - 1;
  for (let id = 0; id < size; id++) {
    const bytes = tokenBytes[id];
    if (bytes.length === 0) continue;
    let slot = hashBytes(bytes, 0, bytes.length) & vocabMask;
    let duplicate = false;
    while (vocabTable[slot] !== -1) {
      const other = tokenBytes[vocabTable[slot]];
      if (other.length === bytes.length && other.every((b, i) => b === bytes[i])) duplicate = true;
      slot = (slot + 1) & vocabMask;
    }
    if (!duplicate) vocabTable[slot] = id;
  }

  // Merges: [a, b, merged] by rank; a later duplicate pair takes the later rank (as Rust's map
  // insert).
  const mergeList = model.merges.map((m) => (typeof m === "string" ? splitMerge(m) : m));
  const merges = new Uint32Array(mergeList.length * 3);
  mergeList.forEach(([a, b], rank) => {
    const ia = model.vocab[a];
    const ib = model.vocab[b];
    const merged = model.vocab[a + b];
    if (ia === undefined || ib === undefined || merged === undefined)
      throw new Error(`merge ${a} ${b} is out of vocabulary`);
    merges.set([ia, ib, merged], rank * 3);
  });
  const mergeTable = new Int32Array(tableSize(mergeList.length)).fill(-1);
  const mergeMask = mergeTable.length - 1;
  for (let rank = 0; rank < mergeList.length; rank++) {
    const a = merges[rank * 3];
    const b = merges[rank * 3 + 1];
    let slot = hashPair(a, b) & mergeMask;
    while (
      mergeTable[slot] !== -1 &&
      !(merges[mergeTable[slot] * 3] === a && merges[mergeTable[slot] * 3 + 1] === b)
    )
      slot = (slot + 1) & mergeMask;
    mergeTable[slot] = rank;
  }

  // Initial symbols: a byte's id (byte-level) or its <0xNN> fallback token.
  const byteIds = Array.from({ length: 256 }, (_, b) => {
    if (byteLevel) {
      const char = [...charToByte].find(([, value]) => value === b)[0];
      return model.vocab[char] ?? -1;
    }
    return model.byte_fallback
      ? (model.vocab[`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`] ?? -1)
      : -1;
  });

  const added = (json.added_tokens ?? []).map((t) => {
    if (t.single_word || t.lstrip || t.rstrip)
      throw new Error(`added token ${t.content}: single_word/lstrip/rstrip are not supported`);
    return [t.id, t.content, t.special ? 1 : 0, t.normalized ? 1 : 0];
  });
  const tokenId = (value) => {
    const token = configToken(value);
    if (token === null) return null;
    return added.find(([, content]) => content === token)?.[0] ?? model.vocab[token] ?? null;
  };

  const sections = [
    ["tokenBytes", blob],
    ["tokenOffsets", offsets],
    ["vocabTable", vocabTable],
    ["merges", merges],
    ["mergeTable", mergeTable],
  ];
  const header = {
    format: 1,
    model: {
      byteLevel,
      size,
      ignoreMerges: model.ignore_merges === true,
      byteFallback: model.byte_fallback === true,
      unkId: model.unk_token == null ? null : (model.vocab[model.unk_token] ?? null),
      fuseUnk: model.fuse_unk === true,
      byteIds,
      wordBreaks: wordBreaks(model, byteLevel),
    },
    normalizer: normalizerSteps(json.normalizer),
    preTokenizer: preTokenizerSteps(json.pre_tokenizer),
    decoder,
    postProcessor: postProcessor(json.post_processor),
    added,
    config: {
      bosTokenId: tokenId(config.bos_token),
      eosTokenId: tokenId(config.eos_token),
      padTokenId: tokenId(config.pad_token),
    },
    sections: {},
  };
  // Section offsets depend on the header's length, which depends on them: fix them at a padded
  // width.
  let headerBytes;
  for (let width = 0; ; ) {
    let offset = align(8 + width);
    for (const [name, array] of sections) {
      header.sections[name] = [offset, array.byteLength];
      offset = align(offset + array.byteLength);
    }
    headerBytes = encoder.encode(JSON.stringify(header));
    if (headerBytes.length <= width) break;
    width = headerBytes.length + 64;
  }
  const [lastOffset, lastLength] = header.sections[sections.at(-1)[0]];
  const out = new Uint8Array(align(lastOffset + lastLength));
  out.set(encoder.encode("TKZ1"), 0);
  new DataView(out.buffer).setUint32(4, headerBytes.length, true);
  out.set(headerBytes, 8);
  out.fill(0x20, 8 + headerBytes.length, header.sections.tokenBytes[0]);
  for (const [name, array] of sections)
    out.set(
      new Uint8Array(array.buffer, array.byteOffset, array.byteLength),
      header.sections[name][0],
    );
  return out;
}

/**
 * SentencePiece-style models (spaces normalized to "▁", no pre-tokenizer split) hand BPE a
 * whole text as one word. No merge can join the symbols on either side of the place where
 * a run of "▁" starts after a character c, unless some token spells "c▁": BPE on the pieces
 * cut there gives the ids of BPE on the whole word (merges never cross a cut, and a merge's
 * rank is the same in every piece). The edge cuts such words (src/tokenizers/bpe.ts) except
 * after the characters listed here. Not for byte-level models, nor where a token spells "▁"
 * after a byte-fallback or unk symbol, nor with ignore_merges (a piece found whole in the
 * vocabulary would skip its merges where the whole word would not).
 */
function wordBreaks(model, byteLevel) {
  const SPACE = "\u2581";
  if (byteLevel || model.ignore_merges === true || model.vocab[SPACE] === undefined)
    return undefined;
  const notAfter = new Set();
  for (const token of Object.keys(model.vocab)) {
    const chars = [...token];
    for (let i = 1; i < chars.length; i++) {
      if (chars[i] !== SPACE || chars[i - 1] === SPACE) continue;
      const left = chars.slice(0, i).join("");
      if (
        /<0x[0-9A-Fa-f]{2}>$/.test(left) ||
        (typeof model.unk_token === "string" && left.endsWith(model.unk_token))
      )
        return undefined;
      notAfter.add(chars[i - 1].codePointAt(0));
    }
  }
  return { before: SPACE.codePointAt(0), notAfter: [...notAfter].sort((a, b) => a - b) };
}

function hasByteLevel(node) {
  if (node === null || node === undefined) return false;
  return (
    node.type === "ByteLevel" || (node.type === "Sequence" && node.pretokenizers.some(hasByteLevel))
  );
}

function splitMerge(merge) {
  const space = merge.indexOf(" ", 1);
  return [merge.slice(0, space), merge.slice(space + 1)];
}

function align(n) {
  return (n + 7) & ~7;
}
