// The edge's /metrics in workerd: valid Prometheus text 0.0.4 (read by the same parser as the
// origin's), requests counted under their route template (never the raw URL), their durations,
// and a generation's prompt and generated tokens and time to first token by model.
import { env, SELF } from "cloudflare:test";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { describe, expect, inject, it } from "vitest";
import { MEMOS } from "../../../src/memos";
import { metricValue } from "../../support/metric-value";
import { bothPlaces, call } from "../../support/workers/generation";
import { BASE, get, KEY } from "../../support/workers/helpers";

const origin = inject("llmOrigin");
const scrape = async () => (await get("/metrics")).text();

// Other files share this isolate's counters (`isolate: false`), so growth is asserted as at
// least what this file caused.
describe("the edge's request and generation metrics", () => {
  it("declares each family once with Prometheus's types and names", async () => {
    const families = parsePrometheusTextFormat(await scrape());
    const types = new Map(families.map((family) => [family.name, family.type]));
    expect(families.length).toBe(types.size);
    expect(
      Object.fromEntries([...types].filter(([name]) => /^edge_(http|prompt|gen|time)/.test(name))),
    ).toEqual({
      edge_http_requests_total: "COUNTER",
      edge_http_request_duration_seconds: "HISTOGRAM",
      edge_prompt_tokens_total: "COUNTER",
      edge_generation_tokens_total: "COUNTER",
      edge_time_to_first_token_seconds: "HISTOGRAM",
    });
    for (const name of types.keys()) expect(name).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/);
  });

  it("shows the entries of each memo it can count, named as the memos' table names them", async () => {
    expect((await get("/v1/models")).status).toBe(200);
    const memos = new Map(
      [...(await scrape()).matchAll(/^edge_isolate_memo_entries\{memo="([^"]+)"\} (\d+)$/gm)].map(
        ([, name, entries]) => [name, Number(entries)],
      ),
    );
    for (const name of memos.keys()) expect(Object.keys(MEMOS)).toContain(name);
    expect(memos.get("openai.served-since")).toBe(1);
    expect(memos.get("isolate.services")).toBe(1);
    // Weak memos have no count, and so no series.
    expect(memos.has("fraud.rules")).toBe(false);
  });

  it("counts requests by route template and status class, never with the raw URL", async () => {
    const card = "card-id-that-must-not-leak";
    const route = 'route="/v1/fraud/cards/:card"';
    const before = await scrape();
    // An unknown card: 404 from the card route's handler.
    for (let i = 0; i < 3; i++) expect((await get(`/v1/fraud/cards/${card}`)).status).toBe(404);
    // No key: 401 from the fraud routes' key guard, counted under the guard's own template.
    expect((await SELF.fetch(`${BASE}/v1/fraud/cards/${card}`)).status).toBe(401);
    await get(`/no/such/${card}`);
    const after = await scrape();

    expect(after).not.toContain(card);
    const requests = (text: string, labels: string) =>
      metricValue(text, "edge_http_requests_total", labels);
    const answered = `{method="GET",${route},status="4xx"}`;
    expect(requests(after, answered) - requests(before, answered)).toBeGreaterThanOrEqual(3);
    const refused = '{method="GET",route="/v1/fraud/*",status="4xx"}';
    expect(requests(after, refused) - requests(before, refused)).toBeGreaterThanOrEqual(1);

    // The duration histogram: as many observations as answers, buckets cumulative to +Inf.
    const count = (text: string) =>
      metricValue(text, "edge_http_request_duration_seconds_count", `{method="GET",${route}}`);
    expect(count(after) - count(before)).toBeGreaterThanOrEqual(3);
    const buckets = after
      .split("\n")
      .filter((line) =>
        line.startsWith(`edge_http_request_duration_seconds_bucket{method="GET",${route}`),
      )
      .map((line) => Number(line.slice(line.lastIndexOf(" ") + 1)));
    expect(buckets.length).toBeGreaterThan(2);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    expect(buckets.at(-1)).toBe(count(after));
  });

  it.skipIf(origin === null).each(bothPlaces(origin))(
    "counts a generation's tokens and its time to first token (%s)",
    async (place, makeApp) => {
      const app = await makeApp();
      const metrics = async () =>
        (
          await app.request(`${BASE}/metrics`, { headers: { authorization: `Bearer ${KEY}` } }, env)
        ).text();
      const model = '{model_name="tiny-llm"}';
      const before = await metrics();
      const response = await call(app, "/v1/chat/completions", {
        model: "tiny-llm",
        messages: [{ role: "user", content: "Tell me about the old house by the river." }],
        max_tokens: 8,
        temperature: 0,
      });
      expect(response.status).toBe(200);
      const { usage } = await response.json<{
        usage: { prompt_tokens: number; completion_tokens: number };
      }>();
      const after = await metrics();
      const grew = (name: string) =>
        metricValue(after, name, model) - metricValue(before, name, model);

      expect(usage.completion_tokens).toBeGreaterThan(0);
      expect(grew("edge_prompt_tokens_total")).toBeGreaterThanOrEqual(usage.prompt_tokens);
      expect(grew("edge_generation_tokens_total")).toBeGreaterThanOrEqual(usage.completion_tokens);
      expect(grew("edge_time_to_first_token_seconds_count")).toBeGreaterThanOrEqual(1);
      // workerd's clock moves only across I/O: the origin's stream is I/O, the WASM loop is not.
      if (place === "origin")
        expect(grew("edge_time_to_first_token_seconds_sum")).toBeGreaterThan(0);
    },
  );
});
