// Text classification end to end inside workerd: tokenizer, INT8 model in WASM, softmax.
import { describe, expect, it } from "vitest";
import { get, post } from "../../support/workers/helpers";

interface ClassifyBody {
  model: string;
  model_version: string;
  results: { labels: { label: string; score: number }[]; tokens: number; truncated: boolean }[];
  usage: { prompt_tokens: number };
}

describe("POST /v1/classify", () => {
  it("classifies a batch with every label's softmax score, best first", async () => {
    const response = await post("/v1/classify", {
      model: "spam-classifier",
      input: [
        "Meeting moved to 3pm, see the agenda attached.",
        "WIN a FREE cruise!!! Click here to claim your prize now",
      ],
    });
    expect(response.status).toBe(200);
    const body = await response.json<ClassifyBody>();
    expect(body.model).toBe("spam-classifier");
    expect(body.results).toHaveLength(2);
    for (const result of body.results) {
      expect(result.labels.map((entry) => entry.label).sort()).toEqual(["ham", "spam"]);
      expect(result.labels[0]!.score).toBeGreaterThanOrEqual(result.labels[1]!.score);
      expect(result.labels[0]!.score + result.labels[1]!.score).toBeCloseTo(1, 6);
      expect(result.tokens).toBeGreaterThan(0);
    }
    expect(body.usage.prompt_tokens).toBe(body.results[0]!.tokens + body.results[1]!.tokens);
    expect(response.headers.get("server-timing")).toMatch(/infer;dur=/);
  });

  it("takes one text and honours top_k", async () => {
    const response = await post("/v1/classify", {
      model: "spam-classifier",
      input: "lunch tomorrow?",
      top_k: 1,
    });
    const body = await response.json<ClassifyBody>();
    expect(body.results).toHaveLength(1);
    expect(body.results[0]!.labels).toHaveLength(1);
  });

  it("truncates a long text to the model's window and says so", async () => {
    const long = await (
      await post("/v1/classify", { model: "spam-classifier", input: "free money ".repeat(2000) })
    ).json<ClassifyBody>();
    const short = await (
      await post("/v1/classify", { model: "spam-classifier", input: "free money" })
    ).json<ClassifyBody>();
    expect(long.results[0]!.truncated).toBe(true);
    expect(short.results[0]!.truncated).toBe(false);
    // 22,000 characters are cut to the tokenizer's maxChars (8,192) and then to at most maxLength
    // (2,048) ids.
    expect(long.results[0]!.tokens).toBeGreaterThan(500);
    expect(long.results[0]!.tokens).toBeLessThanOrEqual(2048);
  });

  it("scores a text the same alone and inside a padded batch", async () => {
    const text = "Your account statement for October is ready to view online.";
    const alone = await (
      await post("/v1/classify", { model: "spam-classifier", input: text })
    ).json<ClassifyBody>();
    const batched = await (
      await post("/v1/classify", {
        model: "spam-classifier",
        input: [text, "a much longer companion text ".repeat(30)],
      })
    ).json<ClassifyBody>();
    const score = (body: ClassifyBody) =>
      body.results[0]!.labels.find((entry) => entry.label === "spam")!.score;
    expect(score(batched)).toBeCloseTo(score(alone), 4);
  });
});

describe("POST /v1/run/{model} (Workers AI shape)", () => {
  it("returns [{label, score}] for {text}", async () => {
    const response = await post("/v1/run/spam-classifier", {
      text: "Can you review my pull request?",
    });
    expect(response.status).toBe(200);
    const labels = await response.json<{ label: string; score: number }[]>();
    expect(labels.map((entry) => entry.label).sort()).toEqual(["ham", "spam"]);
  });
});

describe("GET /v1/models", () => {
  it("lists each model with where it runs, its integrity and its evaluation", async () => {
    const response = await get("/v1/models");
    expect(response.status).toBe(200);
    const body = await response.json<{ object: string; data: Record<string, unknown>[] }>();
    expect(body.object).toBe("list");
    const spam = body.data.find((model) => model.id === "spam-classifier");
    expect(spam).toMatchObject({
      task: "text-classification",
      runtime: "wasm",
      labels: ["ham", "spam"],
    });
    expect(spam?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(spam?.evaluation).toHaveProperty("int8.f1");
  });
});
