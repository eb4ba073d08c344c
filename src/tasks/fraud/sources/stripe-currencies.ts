// Stripe's minor units per currency, which are not ISO 4217's.
import type { ExponentTable } from "./minor-units";

export const STRIPE_EXPONENTS: ExponentTable = {
  // Zero-decimal: the amount is the whole number of units (ISO gives MGA 2; Stripe 0).
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  MGA: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  // Three-decimal (the last digit must be 0 on payments).
  BHD: 3,
  JOD: 3,
  KWD: 3,
  OMR: 3,
  TND: 3,
  // Special cases kept two-decimal in the API although ISO (ISK) or payouts (HUF, TWD) say
  // otherwise: ISK 100 is 1 króna. They need no entry (2 is the default) and are listed for
  // the reader: ISK, HUF, TWD.
};
