// The audit trail: every authenticated request of a key recorded (who, route template, model,
// status, tokens, latency) after its answer, never a path's card id or a body's text; read back
// as the key's activity and its usage per day.
import { env, SELF } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { perModelKey } from "../../../src/compose";
import { AUDIT_RETENTION_DAYS, recordAudit } from "../../../src/tasks/keys/audit";
import { BASE, KEY } from "../../support/workers/helpers";
import { activityOf, bearer, issueKey } from "../../support/workers/keys";

const origin = inject("llmOrigin");

describe.skipIf(origin === null)("audit trail", () => {
  Reflect.set(env, perModelKey("ORIGIN_URL", "tiny-llm"), origin?.url ?? "");

  it("records who did what, with tokens, never the card or the text", async () => {
    const issued = await issueKey(["generate", "classify"]);
    const secretText = "Minutes of the design review: the moon base budget";
    const classify = await SELF.fetch(`${BASE}/v1/classify`, {
      method: "POST",
      headers: { ...bearer(issued.key), "content-type": "application/json" },
      body: JSON.stringify({ model: "spam-classifier", input: secretText }),
    });
    expect(classify.status).toBe(200);
    const card = await SELF.fetch(`${BASE}/v1/fraud/cards/fingerprint%3AsecretCard77`, {
      headers: bearer(issued.key),
    });
    expect(card.status).toBe(403);
    const completion = await SELF.fetch(`${BASE}/v1/completions`, {
      method: "POST",
      headers: { ...bearer(issued.key), "content-type": "application/json" },
      body: JSON.stringify({ model: "tiny-llm", prompt: secretText, max_tokens: 5 }),
    });
    const { usage } = await completion.json<{
      usage: { prompt_tokens: number; completion_tokens: number };
    }>();
    const rows = await activityOf(issued.id, 3);
    expect(rows).toHaveLength(3);
    expect(rows.map((row) => [row.method, row.route, row.status])).toEqual([
      ["POST", "/v1/completions", 200],
      ["GET", "/v1/fraud/cards/:card", 403],
      ["POST", "/v1/classify", 200],
    ]);
    expect(rows[0]).toMatchObject({
      model: "tiny-llm",
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
    });
    const stored = JSON.stringify(
      (await env.DB.prepare("SELECT * FROM audit_log WHERE key_id = ?").bind(issued.id).all())
        .results,
    );
    expect(stored).not.toContain("secretCard77");
    expect(stored).not.toContain("moon base");
    expect(stored).not.toContain(issued.key);

    const daily = await SELF.fetch(`${BASE}/admin/keys/${issued.id}/usage`, {
      headers: bearer(KEY),
    });
    expect(await daily.json()).toEqual({
      data: [
        {
          day: new Date().toISOString().slice(0, 10),
          requests: 3,
          errors: 1,
          prompt_tokens: usage.prompt_tokens,
          completion_tokens: usage.completion_tokens,
        },
      ],
      used: null,
    });
  });

  it("is read by admins only", async () => {
    const issued = await issueKey(["generate", "classify", "metrics"]);
    const response = await SELF.fetch(`${BASE}/admin/keys/${issued.id}/activity`, {
      headers: bearer(issued.key),
    });
    expect(response.status).toBe(403);
  });
});

describe("audit retention", () => {
  it(`keeps ${AUDIT_RETENTION_DAYS} days: older rows are pruned as rows are written`, async () => {
    const keyId = `key_${Date.now().toString(16).padStart(16, "0").slice(-16)}`;
    const day = 86_400_000;
    // An hour past any prune this isolate made, so this write prunes.
    const at = Date.now() + 2 * 3_600_000;
    const entry = {
      keyId,
      method: "GET",
      route: "/v1/models",
      model: undefined,
      status: 200,
      promptTokens: 0,
      completionTokens: 0,
      latencyMs: 1,
    };
    for (const age of [AUDIT_RETENTION_DAYS + 1, AUDIT_RETENTION_DAYS - 1]) {
      await env.DB.prepare(
        "INSERT INTO audit_log (key_id, at, method, route, status, latency_ms) " +
          "VALUES (?, ?, 'GET', '/v1/models', 200, 1)",
      )
        .bind(keyId, new Date(at - age * day).toISOString())
        .run();
    }
    await recordAudit(env.DB, { ...entry, at });
    const { results } = await env.DB.prepare(
      "SELECT at FROM audit_log WHERE key_id = ? ORDER BY at",
    )
      .bind(keyId)
      .all<{ at: string }>();
    expect(results.map((row) => row.at)).toEqual([
      new Date(at - (AUDIT_RETENTION_DAYS - 1) * day).toISOString(),
      new Date(at).toISOString(),
    ]);
  });
});
