// The prompt grammar of the digit diffusion model: every phrasing is a template × a word
// form of a digit (its name, "seven", or its numeral, "7"). The held-out phrasings are
// new combinations of words seen in training: for each digit and form, the two templates
// t with (t + 3·digit + 7·form) mod 10 = 0 are never trained on (every template and every
// word still occurs in training with other partners). The list is committed in
// scripts/diffusion/held-out-phrasings.json BEFORE training (`node scripts/diffusion/phrasings.mjs
// --write`), and train.py refuses to start if a training phrasing is in it.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const NAMES = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
];
export const HELD_OUT_FILE = fileURLToPath(new URL("./held-out-phrasings.json", import.meta.url));

/** "{w}" is the digit's word form, "{a}" the article it takes ("an eight", "an 8"). */
export const TEMPLATES = [
  "{w}",
  "{a} {w}",
  "digit {w}",
  "number {w}",
  "the digit {w}",
  "the number {w}",
  "the numeral {w}",
  "{a} handwritten {w}",
  "{a} hand-drawn {w}",
  "a handwritten digit {w}",
  "a handwritten number {w}",
  "a picture of the digit {w}",
  "a picture of {a} {w}",
  "an image of the number {w}",
  "a drawing of the numeral {w}",
  "{a} scribbled {w}",
  "{w}, handwritten",
  "handwritten {w}",
  "draw {a} {w}",
  "write the digit {w}",
];

function article(word) {
  return /^(eight|8)$/.test(word) ? "an" : "a";
}

/** Every phrasing: `{ text, digit, template, form }` (form 0 = name, 1 = numeral). */
export function allPhrasings() {
  const out = [];
  for (let digit = 0; digit <= 9; digit++) {
    for (const [form, word] of [NAMES[digit], String(digit)].entries()) {
      for (const [template, pattern] of TEMPLATES.entries()) {
        const text = pattern.replace("{a}", article(word)).replace("{w}", word);
        out.push({
          text,
          digit,
          template,
          form,
          heldOut: (template + 3 * digit + 7 * form) % 10 === 0,
        });
      }
    }
  }
  return out;
}

/** The committed held-out list (the file, not the rule, is what training excludes). */
export function readHeldOut() {
  return JSON.parse(readFileSync(HELD_OUT_FILE, "utf8")).phrasings;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes("--write")) {
  const phrasings = allPhrasings()
    .filter((p) => p.heldOut)
    .map(({ text, digit }) => ({ text, digit }));
  const body = {
    description:
      "Held-out prompt phrasings of the digit diffusion model: template x word pairings " +
      "never trained on (scripts/diffusion/phrasings.mjs). Committed before training.",
    phrasings,
  };
  writeFileSync(HELD_OUT_FILE, `${JSON.stringify(body, null, 2)}\n`);
  console.log(`${phrasings.length} held-out phrasings -> ${HELD_OUT_FILE}`);
}
