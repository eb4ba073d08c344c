// Canary rollbacks shared through D1 inside workerd (src/runtime/origin/canary-rollbacks.ts): two
// monitors stand for two isolates. The one whose window crosses the threshold rolls back and
// publishes; the other, which saw no canary failure, adopts it at its next ask (at most every
// SHARED_POLL_MS) and says so in its log and metrics; a new configuration starts afresh.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { CanaryConfig } from "../../../src/runtime/origin/canary-config";
import {
  canaryMetricLines,
  createCanaryMonitor,
  SHARED_POLL_MS,
} from "../../../src/runtime/origin/canary-monitor";
import { d1Rollbacks } from "../../../src/runtime/origin/canary-rollbacks";

const canary: CanaryConfig = {
  stable: "v1",
  canary: "v2",
  weight: 50,
  maxErrorRate: 0.2,
  maxLatencyMs: 500,
  sticky: "conversation",
  windowSeconds: 60,
  minRequests: 10,
};

/** A monitor over the real D1 store, counting the store's answers to its reads. */
function isolate(clock: { now: number }) {
  const lines: string[] = [];
  const monitor = createCanaryMonitor({ now: () => clock.now, log: (line) => lines.push(line) });
  const store = d1Rollbacks(env.DB);
  const reads = { answered: 0 };
  monitor.share({
    publish: (...args) => store.publish(...args),
    read: (...args) => store.read(...args).finally(() => (reads.answered += 1)),
  });
  return { monitor, lines, reads };
}

/** Waits (up to 20 s) for what the monitors do off the hot path: they do not await D1. */
const until = async (check: () => boolean | Promise<boolean>) => {
  for (let i = 0; i < 2_000 && !(await check()); i++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  expect(await check()).toBe(true);
};

describe("a canary rollback shared by every isolate", () => {
  it("moves the other isolate's traffic back at its next ask", async () => {
    const model = `shared-${crypto.randomUUID()}`;
    const clock = { now: 1_000_000 };
    const a = isolate(clock);
    const b = isolate(clock);
    // b is watching too: it has asked once already, and found nothing.
    expect(b.monitor.rolledBack(model, canary)).toBe(false);
    await until(() => b.reads.answered === 1);
    for (let i = 0; i < 10; i++) a.monitor.record(model, canary, "v2", i % 2 === 0, 50);
    expect(a.monitor.rolledBack(model, canary)).toBe(true);
    const published = () => d1Rollbacks(env.DB).read(model, JSON.stringify(canary));
    await until(async () => (await published()) !== undefined);
    expect(await published()).toMatchObject({ reason: "error_rate", errorRate: 0.5, samples: 10 });
    // Within the poll interval b does not ask again; past it, it asks and adopts the rollback.
    clock.now += SHARED_POLL_MS - 1;
    expect(b.monitor.rolledBack(model, canary)).toBe(false);
    expect(b.reads.answered).toBe(1);
    clock.now += 1;
    b.monitor.rolledBack(model, canary);
    await until(() => b.monitor.rolledBack(model, canary));
    expect(b.reads.answered).toBe(2);
    expect(JSON.parse(b.lines[0] ?? "{}")).toMatchObject({
      event: "canary_rolled_back",
      model,
      reason: "error_rate",
      scope: "shared",
    });
    expect(canaryMetricLines(b.monitor.statuses())).toContain(
      `edge_canary_rolled_back{model="${model}",stable="v1",canary="v2",scope="shared"} 1`,
    );
    expect(canaryMetricLines(a.monitor.statuses())).toContain(
      `edge_canary_rolled_back{model="${model}",stable="v1",canary="v2",scope="isolate"} 1`,
    );
    // A new configuration (the canary rolled forward with another weight) starts afresh.
    const next = { ...canary, weight: 20 };
    clock.now += SHARED_POLL_MS;
    expect(b.monitor.rolledBack(model, next)).toBe(false);
    await until(() => b.reads.answered === 3);
    expect(b.monitor.rolledBack(model, next)).toBe(false);
  });
});
