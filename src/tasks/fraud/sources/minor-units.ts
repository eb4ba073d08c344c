// Integer amounts in a provider's minor units → decimal major units, by that provider's own
// table of exponents (each provider departs from ISO 4217 differently; see the tables beside).

/** Exponents that are not 2 (the default), keyed by upper-case currency code. */
export type ExponentTable = Readonly<Record<string, number>>;

/** Converts `value` minor units of `currency` to major units with the given table. */
export function toMajorUnits(table: ExponentTable, value: number, currency: string): number {
  return value / 10 ** (table[currency.toUpperCase()] ?? 2);
}
