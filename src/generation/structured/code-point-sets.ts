// Character sets over code points, as sorted ranges: the classes the regex syntax names (\d, \w,
// \s, `.`, control escapes), merged and complemented.

export const MAX_CODE_POINT = 0x10ffff;

export type Ranges = readonly (readonly [number, number])[];

export const DIGIT: Ranges = [[0x30, 0x39]];
export const WORD: Ranges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
// JavaScript's \s: WhiteSpace and LineTerminator (ECMA-262 22.2.2.9).
export const SPACE: Ranges = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
/** `\n`, `\t`, … → their code points. */
export const CONTROL_ESCAPES: Readonly<Record<string, number>> = {
  n: 0x0a,
  t: 0x09,
  r: 0x0d,
  f: 0x0c,
  v: 0x0b,
  "0": 0,
};
// JavaScript's `.`: anything but a line terminator (so also what Python's `.` matches).
export const DOT: Ranges = [
  [0, 0x09],
  [0x0b, 0x0c],
  [0x0e, 0x2027],
  [0x202a, MAX_CODE_POINT],
];

/** Sorted, merged ranges. */
export function normalize(ranges: Ranges): [number, number][] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out.at(-1);
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

export function complement(ranges: Ranges): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of normalize(ranges)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}
