// A key's limits counted exactly: fixed UTC windows (minute, day, month), requests per minute,
// and tokens reserved before admission and settled to real usage after. Pure state transitions,
// run one at a time by the key's Durable Object (key-limiter.ts).
import type { KeyLimits } from "./api-key";

export type WindowName = "minute" | "day" | "month";
const WINDOWS: readonly WindowName[] = ["minute", "day", "month"];

const TOKEN_LIMIT: Record<WindowName, keyof KeyLimits> = {
  minute: "tokens_per_minute",
  day: "tokens_per_day",
  month: "tokens_per_month",
};

interface Window {
  start: number;
  requests: number;
  tokens: number;
}

interface Reservation {
  tokens: number;
  /** Each window's start when reserved: a refund goes only to windows still current. */
  starts: Record<WindowName, number>;
  at: number;
}

/** A finished generation's reservation and the tokens it really used. */
export interface Settlement {
  id: string;
  used: number;
}

export interface LimiterState {
  windows: Record<WindowName, Window>;
  reservations: Record<string, Reservation>;
}

/** What the x-ratelimit-* headers say: the request window, and the tightest token window. */
export interface LimitSnapshot {
  requests?: { limit: number; remaining: number; resetMs: number };
  tokens?: { limit: number; remaining: number; resetMs: number };
}

export type Admission =
  | { admitted: true; snapshot: LimitSnapshot }
  | {
      admitted: false;
      snapshot: LimitSnapshot;
      retryAfterMs: number;
      /** The limit that refused, e.g. "tokens_per_minute". */
      limit: keyof KeyLimits;
      /** True when the request alone exceeds the limit: waiting will not help. */
      tooLarge: boolean;
    };

export function windowStart(name: WindowName, now: number): number {
  const date = new Date(now);
  if (name === "minute") return now - (now % 60_000);
  if (name === "day") return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

export function windowEnd(name: WindowName, start: number): number {
  if (name === "minute") return start + 60_000;
  if (name === "day") return start + 86_400_000;
  const date = new Date(start);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

/** Reservations older than this are dropped from the table (their charge stays counted). */
const RESERVATION_MAX_AGE_MS = 3_600_000;

export function emptyState(now: number): LimiterState {
  const window = (name: WindowName): Window => ({
    start: windowStart(name, now),
    requests: 0,
    tokens: 0,
  });
  return {
    windows: { minute: window("minute"), day: window("day"), month: window("month") },
    reservations: {},
  };
}

/** Starts the windows that have ended; forgets reservations too old to be settled. */
function roll(state: LimiterState, now: number): void {
  for (const name of WINDOWS) {
    const start = windowStart(name, now);
    if (state.windows[name].start !== start)
      state.windows[name] = { start, requests: 0, tokens: 0 };
  }
  for (const [id, reservation] of Object.entries(state.reservations))
    if (now - reservation.at > RESERVATION_MAX_AGE_MS) delete state.reservations[id];
}

export function snapshot(state: LimiterState, limits: KeyLimits, now: number): LimitSnapshot {
  const result: LimitSnapshot = {};
  const minute = state.windows.minute;
  if (limits.requests_per_minute !== undefined) {
    result.requests = {
      limit: limits.requests_per_minute,
      remaining: Math.max(0, limits.requests_per_minute - minute.requests),
      resetMs: windowEnd("minute", minute.start) - now,
    };
  }
  for (const name of WINDOWS) {
    const limit = limits[TOKEN_LIMIT[name]];
    if (limit === undefined) continue;
    const window = state.windows[name];
    const remaining = Math.max(0, limit - window.tokens);
    if (result.tokens === undefined || remaining < result.tokens.remaining)
      result.tokens = { limit, remaining, resetMs: windowEnd(name, window.start) - now };
  }
  return result;
}

/**
 * Admits a request (`requests`: 1 counts it against requests_per_minute, 0 does not) reserving
 * `tokens` in every token window, or refuses it with the window's reset as Retry-After. All or
 * nothing: a refused request changes no counter.
 */
export function admit(
  state: LimiterState,
  request: { id: string; requests: 0 | 1; tokens: number; limits: KeyLimits; now: number },
): Admission {
  const { limits, now } = request;
  roll(state, now);
  const refuse = (name: WindowName, limit: keyof KeyLimits, tooLarge: boolean): Admission => ({
    admitted: false,
    snapshot: snapshot(state, limits, now),
    retryAfterMs: windowEnd(name, state.windows[name].start) - now,
    limit,
    tooLarge,
  });
  const rpm = limits.requests_per_minute;
  if (request.requests > 0 && rpm !== undefined && state.windows.minute.requests + 1 > rpm)
    return refuse("minute", "requests_per_minute", false);
  if (request.tokens > 0) {
    for (const name of WINDOWS) {
      const limit = limits[TOKEN_LIMIT[name]];
      if (limit !== undefined && state.windows[name].tokens + request.tokens > limit)
        return refuse(name, TOKEN_LIMIT[name], request.tokens > limit);
    }
  }
  state.windows.minute.requests += request.requests;
  if (request.tokens > 0) {
    for (const name of WINDOWS) state.windows[name].tokens += request.tokens;
    state.reservations[request.id] = {
      tokens: request.tokens,
      starts: {
        minute: state.windows.minute.start,
        day: state.windows.day.start,
        month: state.windows.month.start,
      },
      at: now,
    };
  }
  return { admitted: true, snapshot: snapshot(state, limits, now) };
}

/**
 * Settles a reservation to the tokens really used: the difference is refunded to each window
 * still current (an overrun, which admission prevents, would be charged). A second settlement
 * of the same id changes nothing.
 */
export function settle(
  state: LimiterState,
  request: { id: string; used: number; limits: KeyLimits; now: number },
): LimitSnapshot {
  roll(state, request.now);
  const reservation = state.reservations[request.id];
  if (reservation !== undefined) {
    delete state.reservations[request.id];
    const difference = reservation.tokens - request.used;
    for (const name of WINDOWS) {
      const window = state.windows[name];
      if (window.start === reservation.starts[name])
        window.tokens = Math.max(0, window.tokens - difference);
    }
  }
  return snapshot(state, request.limits, request.now);
}

/** Reservations not yet settled (generations running, or ended with their settlement on its
 *  way). */
export function unsettled(state: LimiterState, now: number): number {
  roll(state, now);
  return Object.keys(state.reservations).length;
}

/** Tokens charged in each current window (what an operator's usage view reads). */
export function used(state: LimiterState, now: number): Record<WindowName, number> {
  roll(state, now);
  return {
    minute: state.windows.minute.tokens,
    day: state.windows.day.tokens,
    month: state.windows.month.tokens,
  };
}
