// A number's minimum/maximum, kept digit by digit so that a bounded number can always be finished
// inside its range.

export interface NumberRange {
  /** The whole numbers allowed: [lo, hi] (undefined: unbounded on that side). */
  readonly lo: bigint | undefined;
  readonly hi: bigint | undefined;
  /** The real bounds a fraction must respect. */
  readonly min: number;
  readonly minExclusive: boolean;
  readonly max: number;
  readonly maxExclusive: boolean;
}

/**
 * The range of JSON Schema's minimum/maximum and their exclusive forms (numbers); undefined where
 * none is set.
 *
 * A bounded number is written as a whole number within the range, or as a whole part I with a
 * fraction where every value between I and I ± 1 lies in the range (so no fraction digit can leave
 * it); never with an exponent. Digits are allowed only while some whole number in range still
 * starts with them. Exact: BigInt, not floats, for the whole part.
 */
export function numberRange(bounds: {
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}): NumberRange | undefined {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = bounds;
  if ([minimum, maximum, exclusiveMinimum, exclusiveMaximum].every((bound) => bound === undefined))
    return undefined;
  // The tighter of an inclusive and an exclusive bound on each side.
  const lower = tighter(minimum, exclusiveMinimum, (a, b) => a > b);
  const upper = tighter(maximum, exclusiveMaximum, (a, b) => a < b);
  const lo =
    lower === undefined
      ? undefined
      : BigInt(
          lower.exclusive && Number.isInteger(lower.value)
            ? lower.value + 1
            : Math.ceil(lower.value),
        );
  const hi =
    upper === undefined
      ? undefined
      : BigInt(
          upper.exclusive && Number.isInteger(upper.value)
            ? upper.value - 1
            : Math.floor(upper.value),
        );
  return {
    lo,
    hi,
    min: lower?.value ?? -Infinity,
    minExclusive: lower?.exclusive ?? false,
    max: upper?.value ?? Infinity,
    maxExclusive: upper?.exclusive ?? false,
  };
}

function tighter(
  inclusive: number | undefined,
  exclusive: number | undefined,
  beyond: (a: number, b: number) => boolean,
): { value: number; exclusive: boolean } | undefined {
  if (
    exclusive !== undefined &&
    (inclusive === undefined || beyond(exclusive, inclusive) || exclusive === inclusive)
  )
    return { value: exclusive, exclusive: true };
  return inclusive === undefined ? undefined : { value: inclusive, exclusive: false };
}

/** Whether the range holds any whole number (what every bounded number can fall back to). */
export const hasWholeNumber = (range: NumberRange) =>
  range.lo === undefined || range.hi === undefined || range.lo <= range.hi;

const signed = (negative: boolean, value: bigint) => (negative ? -value : value);

/** Whether this whole number is in the range. */
export function wholeInRange(range: NumberRange, negative: boolean, value: bigint): boolean {
  const x = signed(negative, value);
  return (range.lo === undefined || x >= range.lo) && (range.hi === undefined || x <= range.hi);
}

/**
 * Whether some whole number in the range starts with this prefix: a sign, and `digits` digits
 * reading `value` (none yet: the sign alone).
 */
export function wholeFeasible(
  range: NumberRange,
  negative: boolean,
  value: bigint,
  digits: number,
): boolean {
  const { lo, hi } = range;
  if (digits === 0) return negative ? lo === undefined || lo <= 0n : hi === undefined || hi >= 0n;
  if (value === 0n) return wholeInRange(range, negative, 0n); // a leading 0 takes no more digits
  // With j more digits the number is one of [value·10^j, value·10^j + 10^j − 1] (negated when
  // negative).
  for (let scale = 1n; ; scale *= 10n) {
    const [near, far] = [value * scale, value * scale + scale - 1n];
    const [low, high] = negative ? [-far, -near] : [near, far];
    if ((lo === undefined || high >= lo) && (hi === undefined || low <= hi)) return true;
    // Past the bound on the side the magnitude grows toward: more digits only go further.
    if (negative ? lo !== undefined && high < lo : hi !== undefined && low > hi) return false;
  }
}

/** Whether a fraction may follow this whole part: every value it can reach lies in the range. */
export function fractionAllowed(range: NumberRange, negative: boolean, value: bigint): boolean {
  const whole = Number(value);
  // The values a fraction reaches: [whole, whole + 1) when positive, (−whole − 1, −whole] when
  // negative.
  const [low, high] = negative ? [-whole - 1, -whole] : [whole, whole + 1];
  const lowOk = negative
    ? low >= range.min
    : range.minExclusive
      ? low > range.min
      : low >= range.min;
  const highOk = negative
    ? range.maxExclusive
      ? high < range.max
      : high <= range.max
    : high <= range.max;
  return lowOk && highOk;
}
