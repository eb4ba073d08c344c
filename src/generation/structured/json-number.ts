// A JSON number, byte by byte, held within a range where the schema sets one (number-range.ts):
// what the byte automaton keeps per number.
import { fractionAllowed, wholeFeasible, wholeInRange, type NumberRange } from "./number-range";

type NumberPhase =
  | "start"
  | "minus"
  | "zero"
  | "int"
  | "frac0"
  | "frac"
  | "exp0"
  | "expsign"
  | "exp";

/**
 * A number being written; with a range, its sign and whole part so far (`value`, `digits` of them).
 */
export interface NumberState {
  readonly integer: boolean;
  readonly phase: NumberPhase;
  readonly range?: NumberRange;
  readonly negative: boolean;
  readonly value: bigint;
  readonly digits: number;
}

const [MINUS, PLUS, DOT] = [0x2d, 0x2b, 0x2e];
const isDigit = (byte: number) => byte >= 0x30 && byte <= 0x39;

/** A number before its first byte. */
export function numberStart(integer: boolean, range: NumberRange | undefined): NumberState {
  return {
    integer,
    phase: "start",
    ...(range === undefined ? {} : { range }),
    negative: false,
    value: 0n,
    digits: 0,
  };
}

const numberComplete = (phase: NumberPhase) =>
  phase === "zero" || phase === "int" || phase === "frac" || phase === "exp";

/** The grammar's next phase on this byte, or undefined where a number cannot take it. */
function phaseAfter(phase: NumberPhase, integer: boolean, byte: number): NumberPhase | undefined {
  const digit = isDigit(byte);
  const exponent = !integer && (byte === 0x65 || byte === 0x45);
  switch (phase) {
    case "start":
      return byte === MINUS ? "minus" : byte === 0x30 ? "zero" : digit ? "int" : undefined;
    case "minus":
      return byte === 0x30 ? "zero" : digit ? "int" : undefined;
    case "zero":
      return !integer && byte === DOT ? "frac0" : exponent ? "exp0" : undefined;
    case "int":
      return digit ? "int" : !integer && byte === DOT ? "frac0" : exponent ? "exp0" : undefined;
    case "frac0":
      return digit ? "frac" : undefined;
    case "frac":
      return digit ? "frac" : exponent ? "exp0" : undefined;
    case "exp0":
      return byte === PLUS || byte === MINUS ? "expsign" : digit ? "exp" : undefined;
    case "expsign":
    case "exp":
      return digit ? "exp" : undefined;
  }
}

/**
 * Whether the number may end here: a complete form and, with a range, a whole number in it (a
 * fraction was checked at its dot).
 */
export const numberEnds = (state: NumberState) =>
  numberComplete(state.phase) &&
  (state.range === undefined ||
    state.phase === "frac" ||
    wholeInRange(state.range, state.negative, state.value));

/**
 * The number after a byte: its next state; "refused" where the grammar takes the byte but the
 * range does not; undefined where the byte cannot continue a number (it may end it).
 */
export function numberNext(state: NumberState, byte: number): NumberState | "refused" | undefined {
  const next = phaseAfter(state.phase, state.integer, byte);
  if (next === undefined) return undefined;
  const range = state.range;
  if (range === undefined) return { ...state, phase: next };
  switch (next) {
    case "minus":
      return wholeFeasible(range, true, 0n, 0)
        ? { ...state, phase: next, negative: true }
        : "refused";
    case "zero":
    case "int": {
      const value = state.value * 10n + BigInt(byte - 0x30);
      return wholeFeasible(range, state.negative, value, state.digits + 1)
        ? { ...state, phase: next, value, digits: state.digits + 1 }
        : "refused";
    }
    case "frac0":
      return fractionAllowed(range, state.negative, state.value)
        ? { ...state, phase: next }
        : "refused";
    case "frac":
      return { ...state, phase: next };
    default:
      return "refused"; // no exponent within a range
  }
}
