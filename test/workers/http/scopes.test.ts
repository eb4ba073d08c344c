// Each route requires exactly the scope it needs: a stored key without it gets 403
// insufficient_scope naming the scope (never the data), a key with only that scope gets past.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { metricValue } from "../../support/metric-value";
import { BASE, KEY, problem } from "../../support/workers/helpers";
import { bearer, issueKey } from "../../support/workers/keys";

interface Target {
  method: "GET" | "POST" | "PUT";
  path: string;
  scope: string;
}

// Bodies are `{}`: a key holding the scope gets past auth to the body's 400 (or the GET's answer),
// so no model runs.
const TARGETS: Target[] = [
  { method: "POST", path: "/v1/chat/completions", scope: "generate" },
  { method: "POST", path: "/v1/completions", scope: "generate" },
  { method: "POST", path: "/v1/responses", scope: "generate" },
  { method: "POST", path: "/v1/images/generations", scope: "generate" },
  { method: "POST", path: "/v1/run/tiny-llm", scope: "generate" },
  { method: "POST", path: "/v1/run/spam-classifier", scope: "classify" },
  { method: "POST", path: "/v1/classify", scope: "classify" },
  { method: "POST", path: "/tokenize", scope: "classify" },
  { method: "POST", path: "/v1/detokenize", scope: "classify" },
  { method: "GET", path: "/v2/models/spam-classifier", scope: "classify" },
  { method: "POST", path: "/v2/models/spam-classifier/infer", scope: "classify" },
  { method: "POST", path: "/v1/fraud/score", scope: "fraud:score" },
  { method: "GET", path: "/v1/fraud/cards/fingerprint%3Aany", scope: "fraud:read" },
  { method: "GET", path: "/v1/fraud/performance", scope: "fraud:read" },
  { method: "GET", path: "/v1/fraud/drift", scope: "fraud:read" },
  { method: "GET", path: "/v1/fraud/rules", scope: "fraud:read" },
  { method: "POST", path: "/v1/fraud/rules/backtest", scope: "fraud:read" },
  { method: "PUT", path: "/v1/fraud/rules/scope-check", scope: "admin" },
  { method: "GET", path: "/v1/fraud/export", scope: "admin" },
  { method: "GET", path: "/metrics", scope: "metrics" },
  { method: "GET", path: "/admin/keys", scope: "admin" },
];

const SCOPES = ["generate", "classify", "fraud:score", "fraud:read", "metrics", "admin"];

function call(target: Target, key: string): Promise<Response> {
  return SELF.fetch(`${BASE}${target.path}`, {
    method: target.method,
    headers: { ...bearer(key), "content-type": "application/json" },
    ...(target.method === "GET" ? {} : { body: "{}" }),
  });
}

describe("scopes", () => {
  it("refuses every route to a key without its scope, naming the scope", async () => {
    const keys = Object.fromEntries(
      await Promise.all(
        SCOPES.map(async (scope) => [scope, (await issueKey([scope])).key] as const),
      ),
    );
    for (const target of TARGETS) {
      for (const scope of SCOPES) {
        const response = await call(target, keys[scope]!);
        if (scope === target.scope) {
          expect(response.status, `${target.path} with ${scope}`).not.toBe(401);
          expect(response.status, `${target.path} with ${scope}`).not.toBe(403);
          await response.body?.cancel();
          continue;
        }
        expect(response.status, `${target.path} with ${scope}`).toBe(403);
        const body = await problem(response);
        expect(body.code).toBe("insufficient_scope");
        expect(body.detail).toContain(`"${target.scope}"`);
        expect(response.headers.get("www-authenticate")).toContain(`scope="${target.scope}"`);
      }
    }
  });

  it("lets any valid key list the models", async () => {
    const { key } = await issueKey(["fraud:score"]);
    const response = await SELF.fetch(`${BASE}/v1/models`, { headers: bearer(key) });
    expect(response.status).toBe(200);
  });

  it("never shows a card's data to a key without fraud:read", async () => {
    const { key } = await issueKey(["generate", "fraud:score", "metrics"]);
    const response = await SELF.fetch(`${BASE}/v1/fraud/cards/fingerprint%3Aany`, {
      headers: bearer(key),
    });
    expect(response.status).toBe(403);
    const text = await response.text();
    expect(text).not.toContain("history");
    expect(JSON.parse(text)).toMatchObject({
      code: "insufficient_scope",
      error: { type: "permission_error", code: "insufficient_scope" },
    });
  });

  it("counts refusals on /metrics by reason, never with the presented key", async () => {
    const metrics = async () =>
      (await SELF.fetch(`${BASE}/metrics`, { headers: bearer(KEY) })).text();
    const count = (text: string, reason: string) =>
      metricValue(text, "edge_auth_failures_total", `reason="${reason}"`);
    const before = await metrics();
    const { key } = await issueKey(["classify"]);
    const models = (headers: Record<string, string>) =>
      SELF.fetch(`${BASE}/v1/models`, { headers });
    await models({});
    await models({ authorization: "Basic abc" });
    await models(bearer("ei_never-issued-key"));
    await SELF.fetch(`${BASE}/metrics`, { headers: bearer(key) });
    const after = await metrics();
    expect(count(after, "missing") - count(before, "missing")).toBe(1);
    expect(count(after, "malformed") - count(before, "malformed")).toBe(1);
    expect(count(after, "unknown") - count(before, "unknown")).toBe(1);
    expect(count(after, "insufficient_scope") - count(before, "insufficient_scope")).toBe(1);
    expect(after).not.toContain("ei_never-issued-key");
  });
});
