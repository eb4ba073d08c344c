// A key's counters: all-or-nothing admission, exact under any interleaving of admissions and
// settlements, refunds only to windows still current, and fixed UTC windows.
import { describe, expect, it } from "vitest";
import {
  admit,
  emptyState,
  settle,
  unsettled,
  used,
  windowEnd,
  windowStart,
} from "../../../../src/tasks/keys/limit-windows";

const T0 = Date.UTC(2026, 10, 27, 16, 0, 30);

describe("limit windows", () => {
  it("starts and ends fixed UTC windows", () => {
    expect(new Date(windowStart("minute", T0)).toISOString()).toBe("2026-11-27T16:00:00.000Z");
    expect(new Date(windowStart("day", T0)).toISOString()).toBe("2026-11-27T00:00:00.000Z");
    expect(new Date(windowEnd("month", windowStart("month", T0))).toISOString()).toBe(
      "2026-12-01T00:00:00.000Z",
    );
  });

  it("admits reservations up to the budget exactly, and no request that fits is refused", () => {
    const budget = 1000;
    const limits = { tokens_per_day: budget };
    const state = emptyState(T0);
    // Sizes in a seeded order: 50 requests of 7 to 96 tokens.
    const sizes = Array.from({ length: 50 }, (_, i) => 7 + ((i * 37) % 90));
    let admitted = 0;
    const refused: number[] = [];
    sizes.forEach((tokens, i) => {
      const result = admit(state, { id: `r${i}`, requests: 1, tokens, limits, now: T0 });
      if (result.admitted) admitted += tokens;
      else refused.push(tokens);
    });
    expect(admitted).toBeLessThanOrEqual(budget);
    expect(used(state, T0).day).toBe(admitted);
    for (const tokens of refused) expect(tokens).toBeGreaterThan(budget - admitted);
    expect(refused.length).toBeGreaterThan(0);
  });

  it("settles to real usage, once, refunding the rest", () => {
    const limits = { tokens_per_minute: 100 };
    const state = emptyState(T0);
    expect(admit(state, { id: "a", requests: 1, tokens: 60, limits, now: T0 }).admitted).toBe(true);
    expect(admit(state, { id: "b", requests: 1, tokens: 60, limits, now: T0 })).toMatchObject({
      admitted: false,
      limit: "tokens_per_minute",
      retryAfterMs: 30_000,
      tooLarge: false,
    });
    expect(unsettled(state, T0)).toBe(1);
    settle(state, { id: "a", used: 13, limits, now: T0 });
    settle(state, { id: "a", used: 0, limits, now: T0 });
    expect(used(state, T0).minute).toBe(13);
    expect(unsettled(state, T0)).toBe(0);
    expect(admit(state, { id: "b", requests: 1, tokens: 60, limits, now: T0 }).admitted).toBe(true);
    expect(admit(state, { id: "c", requests: 1, tokens: 101, limits, now: T0 })).toMatchObject({
      admitted: false,
      tooLarge: true,
    });
  });

  it("refunds only windows that are still current", () => {
    const limits = { tokens_per_minute: 100, tokens_per_day: 1000 };
    const state = emptyState(T0);
    admit(state, { id: "a", requests: 1, tokens: 80, limits, now: T0 });
    const later = T0 + 60_000;
    settle(state, { id: "a", used: 20, limits, now: later });
    expect(used(state, later)).toMatchObject({ minute: 0, day: 20 });
  });

  it("counts requests per minute, refusing none that fit", () => {
    const limits = { requests_per_minute: 3 };
    const state = emptyState(T0);
    const results = Array.from({ length: 5 }, (_, i) =>
      admit(state, { id: `r${i}`, requests: 1, tokens: 0, limits, now: T0 }),
    );
    expect(results.map((result) => result.admitted)).toEqual([true, true, true, false, false]);
    expect(results[3]).toMatchObject({ limit: "requests_per_minute", retryAfterMs: 30_000 });
    expect(results[2]!.snapshot.requests).toEqual({ limit: 3, remaining: 0, resetMs: 30_000 });
    expect(
      admit(state, { id: "n", requests: 1, tokens: 0, limits, now: T0 + 30_000 }).admitted,
    ).toBe(true);
  });
});
