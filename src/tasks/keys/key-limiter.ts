// One Durable Object per key: its request rate and token budgets, counted exactly however many
// isolates serve the key (a Durable Object runs one call at a time). The Workers Rate Limiting
// binding would be approximate and per location, which a token budget cannot be.
import { DurableObject } from "cloudflare:workers";
import type { KeyLimits } from "./api-key";
import {
  type Admission,
  admit,
  emptyState,
  type LimiterState,
  type Settlement,
  settle,
  unsettled,
  used,
  type WindowName,
} from "./limit-windows";

export class KeyLimiter extends DurableObject<Env> {
  private state: LimiterState | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.state = await ctx.storage.get<LimiterState>("state");
    });
  }

  private current(): LimiterState {
    this.state ??= emptyState(Date.now());
    return this.state;
  }

  /** Kept in storage so a day's or month's count survives the object's eviction; the output
   *  gate holds the answer until the write is durable. */
  private save(): void {
    void this.ctx.storage.put("state", this.state);
  }

  private settleEach(settled: readonly Settlement[], limits: KeyLimits, now: number): void {
    for (const each of settled) settle(this.current(), { ...each, limits, now });
  }

  /**
   * A request-only admission (the rate) is counted in memory: a minute's count cannot outlive
   * the object (evicted only after a longer idle time), and skipping the write keeps the
   * output gate off the request's path. Token reservations are written, and so are the
   * settlements the call carries (the key's generations that ended since this isolate's last
   * call), settled before the admission is decided.
   */
  admit(request: {
    id: string;
    requests: 0 | 1;
    tokens: number;
    limits: KeyLimits;
    settled?: readonly Settlement[];
  }): Admission {
    const { settled = [], ...admission } = request;
    const now = Date.now();
    this.settleEach(settled, request.limits, now);
    const result = admit(this.current(), { ...admission, now });
    if (settled.length > 0 || (result.admitted && request.tokens > 0)) this.save();
    return result;
  }

  /**
   * Settlements that no later call of their isolate carried (sent after a short wait). One as
   * `id` and `used`: from an isolate of the version before, while a deployment rolls out.
   */
  settle(request: Partial<Settlement> & { settled?: readonly Settlement[]; limits: KeyLimits }) {
    const { id, used = 0 } = request;
    const settled = request.settled ?? (id === undefined ? [] : [{ id, used }]);
    this.settleEach(settled, request.limits, Date.now());
    this.save();
  }

  /** Tokens charged in the current minute, day and month. */
  used(): Record<WindowName, number> {
    return used(this.current(), Date.now());
  }

  /** Reservations not yet settled. */
  unsettled(): number {
    return unsettled(this.current(), Date.now());
  }
}

/** A key's limiter, by key id. */
export function keyLimiter(namespace: DurableObjectNamespace<KeyLimiter>, keyId: string) {
  return namespace.getByName(keyId);
}
