// Adyen's minor units per currency, which are not ISO 4217's.
import type { ExponentTable } from "./minor-units";

/**
 * Adyen's table is leading and differs from ISO 4217 for CLP (2, ISO 0), CVE (0, ISO 2), IDR (0,
 * ISO 2) and ISK (2, ISO 0). adyen-web lists ISK as zero-decimal for display; the API's table says
 * 2, and 2 is what notifications carry.
 */
export const ADYEN_EXPONENTS: ExponentTable = {
  CVE: 0,
  DJF: 0,
  GNF: 0,
  IDR: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  MRO: 1,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  // CLP and ISK: 2, the default (ISO 4217 says 0).
};
