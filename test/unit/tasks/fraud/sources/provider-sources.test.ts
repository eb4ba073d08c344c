// Pure mappings of provider payloads: each provider's minor-unit table (not ISO 4217's), the
// Adyen refusal vocabulary, and the card-identity fallbacks.
import { describe, expect, it } from "vitest";
import { adyenCardId } from "../../../../../src/tasks/fraud/sources/adyen";
import { ADYEN_EXPONENTS } from "../../../../../src/tasks/fraud/sources/adyen-currencies";
import { errorsForRefusal } from "../../../../../src/tasks/fraud/sources/adyen-refusals";
import { toMajorUnits } from "../../../../../src/tasks/fraud/sources/minor-units";
import { stripeCardId } from "../../../../../src/tasks/fraud/sources/stripe";
import { STRIPE_EXPONENTS } from "../../../../../src/tasks/fraud/sources/stripe-currencies";

describe("minor units per provider", () => {
  it.each([
    // currency, minor units, Stripe's major units, Adyen's major units, ISO 4217's exponent
    ["CLP", 10_000, 10_000, 100, 0],
    ["ISK", 50_000, 500, 500, 0],
    ["IDR", 150_000, 1_500, 150_000, 2],
    ["CVE", 1_000, 10, 1_000, 2],
    ["MGA", 1_000, 1_000, 10, 2],
    ["JPY", 500, 500, 500, 0],
    ["KWD", 12_340, 12.34, 12.34, 3],
    ["usd", 1_099, 10.99, 10.99, 2],
  ])("%s %d: Stripe %d, Adyen %d", (currency, value, stripe, adyen, iso) => {
    expect(toMajorUnits(STRIPE_EXPONENTS, value, currency)).toBe(stripe);
    expect(toMajorUnits(ADYEN_EXPONENTS, value, currency)).toBe(adyen);
    // Where a provider departs from ISO 4217, reading ISO's exponent would be wrong by 100×.
    if (stripe !== adyen) expect([stripe, adyen]).toContain(value / 10 ** iso);
  });

  it("keeps large valid amounts exact (VND 1,500,000,000)", () => {
    expect(toMajorUnits(STRIPE_EXPONENTS, 1_500_000_000, "vnd")).toBe(1_500_000_000);
    expect(toMajorUnits(ADYEN_EXPONENTS, 1_500_000_000, "VND")).toBe(1_500_000_000);
  });
});

describe("Adyen refusal reasons in the model's error vocabulary", () => {
  it.each([
    ["CVC Declined", ["Bad CVV"]],
    ["cvc declined ", ["Bad CVV"]],
    ["Expired Card", ["Bad Expiration"]],
    ["Invalid Card Number", ["Bad Card Number"]],
    ["Not enough balance", ["Insufficient Balance"]],
    ["Pin tries exceeded", ["Bad PIN"]],
    ["AVS Declined", ["Bad Zipcode"]],
    ["Issuer Unavailable", ["Technical Glitch"]],
    ["Refused", []],
    ["FRAUD", []],
    [undefined, []],
  ])("%s → %j", (reason, errors) => expect(errorsForRefusal(reason)).toEqual(errors));
});

describe("card identity", () => {
  it("prefers the provider's identity and falls back to last four + expiry", () => {
    expect(
      stripeCardId({
        fingerprint: "Xt5EWLLDS7FJjR1c",
        last4: "4242",
        exp_month: 8,
        exp_year: 2030,
      }),
    ).toBe("fingerprint:Xt5EWLLDS7FJjR1c");
    expect(
      stripeCardId({
        fingerprint: null,
        brand: "visa",
        last4: "4242",
        exp_month: 8,
        exp_year: 2030,
      }),
    ).toBe("stripe:card:visa:4242:8/2030");
    expect(stripeCardId({ fingerprint: null })).toBeUndefined();
    expect(
      adyenCardId({ hmacSignature: "x", alias: "H167852639363479", cardSummary: "1111" }),
    ).toBe("adyen:H167852639363479");
    expect(
      adyenCardId({
        hmacSignature: "x",
        cardBin: "411111",
        cardSummary: "1111",
        expiryDate: "03/2030",
      }),
    ).toBe("adyen:card:411111…1111/03/2030");
    expect(adyenCardId({ hmacSignature: "x", cardSummary: "1111" })).toBeUndefined();
  });
});
