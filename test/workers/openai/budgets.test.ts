// Per-key limits through the real Worker entry and the reference origin: OpenAI's x-ratelimit-*
// headers on every answer, 429 with Retry-After before any stream byte, a token budget never
// overspent by concurrent requests, and aborted streams refunded what they did not generate.
import { env, SELF } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { perModelKey } from "../../../src/compose";
import { keyLimiter } from "../../../src/tasks/keys/key-limiter";
import { BASE, KEY, problem } from "../../support/workers/helpers";
import { activityOf, bearer, issueKey } from "../../support/workers/keys";

const origin = inject("llmOrigin");
const PROMPT = "The long story of the town began";

const complete = (key: string, body: Record<string, unknown> = {}, signal?: AbortSignal) =>
  SELF.fetch(`${BASE}/v1/completions`, {
    method: "POST",
    headers: { ...bearer(key), "content-type": "application/json" },
    body: JSON.stringify({ model: "tiny-llm", prompt: PROMPT, temperature: 0, ...body }),
    ...(signal === undefined ? {} : { signal }),
  });

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** The key's month count once every reservation is settled (settlements come after the
 *  answers: with the key's next reservation, or alone within SETTLE_DELAY_MS). */
async function settledMonth(keyId: string): Promise<number> {
  const limiter = keyLimiter(env.KEY_LIMITS, keyId);
  for (let i = 0; i < 100 && (await limiter.unsettled()) > 0; i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await limiter.unsettled()).toBe(0);
  return (await limiter.used()).month;
}

/** A minute's counts must not straddle its end: waits for a fresh minute near one. */
async function awayFromMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

describe.skipIf(origin === null)("per-key limits", () => {
  Reflect.set(env, perModelKey("ORIGIN_URL", "tiny-llm"), origin?.url ?? "");

  it("sends OpenAI's headers on every answer, and 429 before any stream byte", async () => {
    const { key } = await issueKey(["generate"], {
      requests_per_minute: 2,
      tokens_per_month: 100_000,
    });
    await awayFromMinuteEnd();
    const first = await complete(key, { max_tokens: 4 });
    expect(first.status).toBe(200);
    const { usage } = await first.json<{ usage: Usage }>();
    expect(first.headers.get("x-ratelimit-limit-requests")).toBe("2");
    expect(first.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    // OpenAI's durations: "20ms", "1s", "6m0s" (a full minute away reads "1m0s").
    expect(first.headers.get("x-ratelimit-reset-requests")).toMatch(/^(\d+h)?(\d+m)?\d+(ms|s)$/);
    expect(first.headers.get("x-ratelimit-limit-tokens")).toBe("100000");
    // At admission the reservation (prompt + max_tokens) is what is taken.
    expect(first.headers.get("x-ratelimit-remaining-tokens")).toBe(
      String(100_000 - usage.prompt_tokens - 4),
    );
    const second = await SELF.fetch(`${BASE}/v1/models`, { headers: bearer(key) });
    expect(second.status).toBe(200);
    expect(second.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    const third = await complete(key, { max_tokens: 4, stream: true });
    expect(third.status).toBe(429);
    expect(third.headers.get("content-type")).toBe("application/problem+json");
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(third.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(await problem(third)).toMatchObject({
      code: "rate_limited",
      error: { type: "rate_limit_error" },
    });
  });

  it("sends them on streams and refusals of scope too", async () => {
    const { key } = await issueKey(["generate"], { tokens_per_day: 100_000 });
    const stream = await complete(key, { max_tokens: 3, stream: true });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    expect(stream.headers.get("x-ratelimit-limit-tokens")).toBe("100000");
    await stream.text();
    const forbidden = await SELF.fetch(`${BASE}/v1/classify`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: "{}",
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get("x-ratelimit-limit-tokens")).toBe("100000");
  });

  it("counts a generation route's refused requests against the rate too", async () => {
    const { key } = await issueKey(["generate"], { requests_per_minute: 2 });
    await awayFromMinuteEnd();
    // Counted in the reservation when there is one, after the answer when there is none.
    const invalid = await complete(key, { max_tokens: "many" });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    const valid = await complete(key, { max_tokens: 2 });
    expect(valid.status).toBe(200);
    expect(valid.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect((await complete(key, { max_tokens: 2 })).status).toBe(429);
  });

  it("refuses a generation whose reservation exceeds the budget, before any byte", async () => {
    const { key } = await issueKey(["generate"], { tokens_per_month: 50 });
    const response = await complete(key, { max_tokens: 100, stream: true });
    expect(response.status).toBe(429);
    const body = await problem(response);
    expect(body).toMatchObject({ code: "rate_limited", field: "max_tokens" });
    expect(body.detail).toContain("tokens_per_month");
    expect(response.headers.get("x-ratelimit-remaining-tokens")).toBe("50");
  });

  it("charges an ended generation what it used before the key's next admission", async () => {
    const { key } = await issueKey(["generate"], { tokens_per_month: 100_000 });
    const first = await complete(key, { max_tokens: 64 });
    const used = (await first.json<{ usage: Usage }>()).usage.total_tokens;
    const second = await complete(key, { max_tokens: 4 });
    const { usage } = await second.json<{ usage: Usage }>();
    // The first is charged what it used, not what it reserved, in the second's headers.
    expect(second.headers.get("x-ratelimit-remaining-tokens")).toBe(
      String(100_000 - used - usage.prompt_tokens - 4),
    );
  });

  it("a key's object applies carried settlements first, each once", async () => {
    const limiter = keyLimiter(env.KEY_LIMITS, `carried-${crypto.randomUUID()}`);
    const limits = { tokens_per_month: 100 };
    const reserve = (id: string, tokens: number, settled: { id: string; used: number }[] = []) =>
      limiter.admit({ id, requests: 0, tokens, limits, settled });
    expect((await reserve("a", 60)).admitted).toBe(true);
    expect((await reserve("b", 60)).admitted).toBe(false);
    expect(await limiter.unsettled()).toBe(1);
    // a used 10: b fits once a is settled, in the same call.
    expect(await reserve("b", 60, [{ id: "a", used: 10 }])).toMatchObject({
      admitted: true,
      snapshot: { tokens: { remaining: 30 } },
    });
    await limiter.settle({ settled: [{ id: "a", used: 0 }], limits });
    // As the version before sent one, while a deployment rolls out.
    await limiter.settle({ id: "b", used: 20, limits });
    expect(await limiter.unsettled()).toBe(0);
    expect((await limiter.used()).month).toBe(30);
  });

  it("50 concurrent requests never overspend a budget of B, and all that fit are served", async () => {
    const maxTokens = 8;
    const probe = await complete(KEY, { max_tokens: maxTokens, ignore_eos: true });
    const { usage } = await probe.json<{ usage: Usage }>();
    // With ignore_eos each request uses exactly its reservation: 20 fit, the 21st does not.
    const cost = usage.prompt_tokens + maxTokens;
    expect(usage.total_tokens).toBe(cost);
    const budget = cost * 20 + Math.floor(cost / 2);
    const issued = await issueKey(["generate"], { tokens_per_month: budget });
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        complete(issued.key, { max_tokens: maxTokens, ignore_eos: true }),
      ),
    );
    const served: Usage[] = [];
    let refused = 0;
    for (const response of responses) {
      if (response.status === 200) served.push((await response.json<{ usage: Usage }>()).usage);
      else {
        expect(response.status).toBe(429);
        expect((await problem(response)).detail).toContain("tokens_per_month");
        refused += 1;
      }
    }
    const spent = served.reduce((sum, each) => sum + each.total_tokens, 0);
    expect(spent).toBeLessThanOrEqual(budget);
    expect(served).toHaveLength(20);
    expect(refused).toBe(30);
    expect(await settledMonth(issued.id)).toBe(spent);
  });

  it("refunds 24 aborted streams all they did not generate", async () => {
    const maxTokens = 400;
    const issued = await issueKey(["generate"], { tokens_per_month: 1_000_000 });
    let received = 0;
    let prompts = 0;
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          const response = await complete(issued.key, {
            max_tokens: maxTokens,
            stream: true,
            stream_options: { include_usage: true, continuous_usage_stats: true },
          });
          expect(response.status).toBe(200);
          const reader = response.body!.getReader();
          const decoder = new TextDecoder();
          let text = "";
          for (let i = 0; i < 3; i++) text += decoder.decode((await reader.read()).value);
          await reader.cancel();
          // The last usage the client saw: what the edge had counted when it sent that chunk.
          const usages = [...text.matchAll(/"usage":(\{[^}]*\})/g)].map(
            (match) => JSON.parse(match[1]!) as Usage,
          );
          const last = usages.at(-1);
          expect(last).toBeDefined();
          received += last!.completion_tokens;
          prompts += last!.prompt_tokens;
        }),
      );
    }
    const charged = await settledMonth(issued.id);
    const reserved = 24 * (prompts / 24 + maxTokens);
    // To the token: the budget charged equals what the audit trail says the 24 generated.
    const rows = await activityOf(issued.id, 24);
    expect(rows).toHaveLength(24);
    const audited = rows.reduce((sum, row) => sum + row.prompt_tokens + row.completion_tokens, 0);
    expect(charged).toBe(audited);
    // Charged what was generated: at least what the clients saw, far below the reservations.
    expect(charged).toBeGreaterThanOrEqual(prompts + received);
    expect(charged).toBeLessThan(prompts + received + 24 * 16);
    expect(charged).toBeLessThan(reserved / 4);
  });
});
