// The canary's watch (src/runtime/origin/canary-monitor.ts): a rollback when the canary's error
// rate or p95 latency over the window crosses its threshold, never on too few attempts or old
// ones, said once in a structured log line and in the metrics; a new configuration starts afresh.
import { describe, expect, it } from "vitest";
import type { CanaryConfig } from "../../../../src/runtime/origin/canary-config";
import {
  canaryMetricLines,
  createCanaryMonitor,
  p95,
} from "../../../../src/runtime/origin/canary-monitor";

const canary: CanaryConfig = {
  stable: "v1",
  canary: "v2",
  weight: 10,
  maxErrorRate: 0.2,
  maxLatencyMs: 500,
  sticky: "conversation",
  windowSeconds: 10,
  minRequests: 10,
};

function watched() {
  let clock = 1_000_000;
  const lines: string[] = [];
  const monitor = createCanaryMonitor({ now: () => clock, log: (line) => lines.push(line) });
  return {
    monitor,
    lines,
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

describe("the canary's rollback", () => {
  it("takes the nearest-rank 95th percentile", () => {
    expect(p95([])).toBe(0);
    expect(p95(Array.from({ length: 100 }, (_, i) => i + 1))).toBe(95);
    expect(p95([3, 1, 2])).toBe(3);
  });

  it("rolls back when the error rate crosses its threshold over enough attempts", () => {
    const { monitor, lines } = watched();
    for (let i = 0; i < 7; i += 1) monitor.record("m", canary, "v2", true, 50);
    for (let i = 0; i < 2; i += 1) monitor.record("m", canary, "v2", false, 50);
    // 9 attempts: fewer than minRequests decide nothing, whatever the rate.
    expect(monitor.rolledBack("m", canary)).toBe(false);
    monitor.record("m", canary, "v2", true, 50);
    // 2 of 10 failed: 0.2 is not above 0.2.
    expect(monitor.rolledBack("m", canary)).toBe(false);
    monitor.record("m", canary, "v2", false, 50);
    expect(monitor.rolledBack("m", canary)).toBe(true);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      event: "canary_rolled_back",
      model: "m",
      stable: "v1",
      canary: "v2",
      reason: "error_rate",
      errorRate: 0.2727,
      samples: 11,
      windowSeconds: 10,
      scope: "isolate",
    });
    // Said once: later failures add no line.
    monitor.record("m", canary, "v2", false, 50);
    expect(lines).toHaveLength(1);
  });

  it("never counts the stable version's failures against the canary", () => {
    const { monitor } = watched();
    for (let i = 0; i < 50; i += 1) monitor.record("m", canary, "v1", false, 50);
    expect(monitor.rolledBack("m", canary)).toBe(false);
  });

  it("rolls back when the p95 time to first token crosses its threshold", () => {
    const { monitor, lines } = watched();
    for (let i = 0; i < 9; i += 1) monitor.record("m", canary, "v2", true, 100);
    monitor.record("m", canary, "v2", true, 900);
    expect(monitor.rolledBack("m", canary)).toBe(true);
    expect(JSON.parse(lines[0]!)).toMatchObject({ reason: "latency", p95Ms: 900 });
  });

  it("forgets attempts older than the window", () => {
    const { monitor, advance } = watched();
    for (let i = 0; i < 9; i += 1) monitor.record("m", canary, "v2", false, 50);
    advance(10_001);
    for (let i = 0; i < 9; i += 1) monitor.record("m", canary, "v2", true, 50);
    monitor.record("m", canary, "v2", false, 50);
    expect(monitor.rolledBack("m", canary)).toBe(false);
  });

  it("starts afresh (rolls forward) when the configuration changes", () => {
    const { monitor } = watched();
    for (let i = 0; i < 10; i += 1) monitor.record("m", canary, "v2", false, 50);
    expect(monitor.rolledBack("m", canary)).toBe(true);
    const next = { ...canary, weight: 5 };
    expect(monitor.rolledBack("m", next)).toBe(false);
    expect(monitor.rolledBack("other", canary)).toBe(false);
  });

  it("reports the split, attempts by version and the rollback as Prometheus lines", () => {
    const { monitor } = watched();
    monitor.record("m", canary, "v1", true, 50);
    for (let i = 0; i < 10; i += 1) monitor.record("m", canary, "v2", false, 50);
    const lines = canaryMetricLines(monitor.statuses());
    expect(lines).toContain(
      'edge_canary_rolled_back{model="m",stable="v1",canary="v2",scope="isolate"} 1',
    );
    expect(lines).toContain('edge_canary_weight_percent{model="m"} 10');
    expect(lines).toContain(
      'edge_model_version_attempts_total{model="m",version="v1",outcome="ok"} 1',
    );
    expect(lines).toContain(
      'edge_model_version_attempts_total{model="m",version="v2",outcome="error"} 10',
    );
  });
});
