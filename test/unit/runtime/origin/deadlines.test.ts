// Phase deadlines toward the origin (src/runtime/origin/deadlines.ts): renewing the idle
// phase on every chunk only moves its due time (one timer, re-armed when it fires early),
// so a stream that keeps sending never times out and one that goes silent does, on time.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ServiceError } from "../../../../src/errors/service-error";
import { deadlines } from "../../../../src/runtime/origin/deadlines";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("deadlines", () => {
  it("an idle phase renewed by each chunk fires only after a silent gap of its length", () => {
    const limits = deadlines(undefined);
    limits.phase(100, "went silent");
    for (let chunk = 0; chunk < 10; chunk += 1) {
      vi.advanceTimersByTime(60);
      limits.phase(100, "went silent");
    }
    expect(limits.signal.aborted).toBe(false);
    vi.advanceTimersByTime(99);
    expect(limits.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(limits.signal.aborted).toBe(true);
    expect(limits.timedOut()).toBe(true);
    const reason: unknown = limits.signal.reason;
    expect(reason).toBeInstanceOf(ServiceError);
    expect(reason instanceof ServiceError && reason.code).toBe("upstream_timeout");
    expect(reason instanceof ServiceError && reason.message).toBe(
      "The GPU origin went silent within 100 ms",
    );
  });

  it("a new phase replaces the previous deadline; clear() and abort() end it", () => {
    const limits = deadlines(undefined);
    limits.phase(50, "did not answer");
    vi.advanceTimersByTime(40);
    limits.phase(200, "sent no first token");
    vi.advanceTimersByTime(150);
    expect(limits.signal.aborted).toBe(false);
    vi.advanceTimersByTime(50);
    expect(limits.signal.reason instanceof ServiceError && limits.signal.reason.message).toMatch(
      /sent no first token within 200 ms/,
    );

    const cleared = deadlines(undefined);
    cleared.phase(10, "did not answer");
    cleared.clear();
    vi.advanceTimersByTime(100);
    expect(cleared.signal.aborted).toBe(false);
    cleared.abort(new Error("consumer left"));
    expect(cleared.signal.aborted).toBe(true);
    expect(cleared.timedOut()).toBe(false);
  });

  it(
    "a later phase keeps the armed timer, an earlier one " +
      "re-arms it: one timer for connect → first token → idle",
    () => {
      const limits = deadlines(undefined);
      const timers = vi.spyOn(globalThis, "setTimeout");
      limits.phase(300, "did not answer");
      vi.advanceTimersByTime(10);
      limits.phase(600, "sent no first token");
      vi.advanceTimersByTime(10);
      limits.phase(300, "went silent");
      expect(timers).toHaveBeenCalledTimes(1);
      // The first timer fires at 300 ms, early for the idle phase (due at 320): re-armed for the
      // rest.
      vi.advanceTimersByTime(299);
      expect(limits.signal.aborted).toBe(false);
      vi.advanceTimersByTime(1);
      expect(limits.signal.reason instanceof ServiceError && limits.signal.reason.message).toMatch(
        /went silent within 300 ms/,
      );
      timers.mockRestore();

      const shorter = deadlines(undefined);
      shorter.phase(1000, "sent no first token");
      shorter.phase(50, "went silent");
      vi.advanceTimersByTime(50);
      expect(
        shorter.signal.reason instanceof ServiceError && shorter.signal.reason.message,
      ).toMatch(/went silent within 50 ms/);
    },
  );

  it("follows the caller's signal", () => {
    const caller = new AbortController();
    const limits = deadlines(caller.signal);
    limits.phase(1000, "went silent");
    caller.abort(new Error("client left"));
    expect(limits.signal.aborted).toBe(true);
    expect(limits.timedOut()).toBe(false);
  });
});
