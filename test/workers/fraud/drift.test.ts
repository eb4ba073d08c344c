// GET /v1/fraud/drift inside workerd: PSI per monitored feature against the shipped reference,
// the thresholds it applies, no signal below the minimum sample, 400 naming a bad window. (The
// same report on /metrics: test/workers/isolate/drift-metrics.test.ts.)
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BASE } from "../../support/workers/fraud";
import { KEY } from "../../support/workers/helpers";

const drift = (query: string) =>
  SELF.fetch(`${BASE}/v1/fraud/drift${query}`, { headers: { authorization: `Bearer ${KEY}` } });

describe("GET /v1/fraud/drift", () => {
  it("reports every monitored feature against the reference, silent on a small sample", async () => {
    // A window in 2001: no decision of any test falls in it.
    const response = await drift("?since=2001-01-01T00:00:00Z&until=2001-02-01T00:00:00Z");
    expect(response.status).toBe(200);
    const body = await response.json<{
      sample: number;
      features: Record<string, { psi: number; status: string }>;
      drift: boolean;
    }>();
    expect(body).toMatchObject({
      model: "fraud-gru",
      sample: 0,
      min_sample: 100,
      thresholds: { moderate: 0.1, drift: 0.25 },
      drifted: [],
      drift: false,
    });
    expect(Object.keys(body.features).toSorted()).toEqual([
      "history_count",
      "hour",
      "log_amount",
      "method",
      "score",
    ]);
  });

  it("refuses a window that ends before it starts, naming the field", async () => {
    const response = await drift("?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z");
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ field: "since" });
  });
});
