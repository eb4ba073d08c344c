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
  type LimitSnapshot,
  settle,
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

  /**
   * A request-only admission (the rate) is counted in memory: a minute's count cannot outlive
   * the object (evicted only after a longer idle time), and skipping the write keeps the
   * output gate off the request's path. Token reservations are written.
   */
  admit(request: { id: string; requests: 0 | 1; tokens: number; limits: KeyLimits }): Admission {
    const admission = admit(this.current(), { ...request, now: Date.now() });
    if (admission.admitted && request.tokens > 0) this.save();
    return admission;
  }

  settle(request: { id: string; used: number; limits: KeyLimits }): LimitSnapshot {
    const snapshot = settle(this.current(), { ...request, now: Date.now() });
    this.save();
    return snapshot;
  }

  /** Tokens charged in the current minute, day and month. */
  used(): Record<WindowName, number> {
    return used(this.current(), Date.now());
  }
}

/** A key's limiter, by key id. */
export function keyLimiter(namespace: DurableObjectNamespace<KeyLimiter>, keyId: string) {
  return namespace.get(namespace.idFromName(keyId));
}
