// Seeded fuzzing of every route inside workerd: valid requests and mutated ones (wrong
// types, huge, deeply nested and empty values, unknown members, malformed JSON, bad
// content types, bad or missing keys, unknown paths and methods). Every answer must be
// documented in /openapi.json and match its schema; no 500; every error is problem+json
// with a known code and its dialect's members. A failure names the seed and request number.
import { env, SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { TEST_SECRETS } from "../../support/secrets";
import { adyenItem, deliverStripe, stripeEvent, T0, unique } from "../../support/workers/fraud";
import { encode as encodeJpeg } from "jpeg-js";
import { encodePng } from "../../../src/images/png";
import { BASE, KEY } from "../../support/workers/helpers";
import { Conformance, type OpenApiDocument } from "../../support/workers/openapi-conformance";

const SEEDS = [20261123, 7, 424242];
const REQUESTS_PER_SEED = 1000;
/** Requests in flight at once (the isolate interleaves them, as in production). */
const CONCURRENCY = 8;

/** mulberry32: a small, well-mixed 32-bit generator, so a seed replays the same run. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}
type Random = ReturnType<typeof generator>;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A builder's value as plain JSON (what goes over the wire anyway). */
const toJson = (value: unknown): Json => JSON.parse(JSON.stringify(value));

const transaction = (id: string): Json => ({
  id,
  card_id: "fuzz-card",
  timestamp: "2019-10-01T12:00:00Z",
  amount: 12.5,
  currency: "USD",
  method: "chip",
  merchant: {
    id: "m1",
    name: "CORNER GROCER",
    city: "Richmond",
    state: "VA",
    zip: "23229",
    mcc: "5411",
  },
});

const spamTensors = (ids: number[]): Json => ({
  id: "fuzz",
  inputs: [
    { name: "input_ids", shape: [1, ids.length], datatype: "INT64", data: ids },
    { name: "attention_mask", shape: [1, ids.length], datatype: "INT64", data: ids.map(() => 1) },
  ],
});

const fraudTensors = (): Json => ({
  inputs: [
    {
      name: "transactions",
      shape: [7, 1, 180],
      datatype: "FP32",
      data: Array.from({ length: 7 * 180 }, (_, i) => (i % 13) / 13),
    },
  ],
});

interface Target {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  body?: () => Json;
  /** A non-JSON body (an image file, a multipart form): its bytes are mutated instead. */
  raw?: { type: "image/png" | "image/jpeg" | "multipart"; bytes: () => Uint8Array };
  auth: "bearer" | "none";
}

/** A small digit-like image: a bar of ink on black, as PNG, JPEG, data URL and byte list. */
const barPixels = Uint8Array.from({ length: 28 * 28 }, (_, i) =>
  i % 28 >= 12 && i % 28 <= 15 && i >= 4 * 28 && i < 24 * 28 ? 255 : 0,
);
const barPng = () => encodePng(barPixels, 28, 28);
const barJpeg = () =>
  new Uint8Array(
    encodeJpeg(
      {
        data: Uint8Array.from({ length: 28 * 28 * 4 }, (_, i) =>
          i % 4 === 3 ? 255 : (barPixels[i >> 2] ?? 0),
        ),
        width: 28,
        height: 28,
      },
      90,
    ).data,
  );
const barDataUrl = () => `data:image/png;base64,${btoa(String.fromCharCode(...barPng()))}`;

const MODELS = [
  ["spam-classifier", "2.0.0"],
  ["fraud-gru", "1.1.0"],
  ["digit-classifier", "1.0.0"],
] as const;

/** A stored key the admin targets read, rotate and revoke (inserted before the run). */
const FUZZ_KEY_ID = "key_f022f022f022f022";

const TARGETS: Target[] = [
  {
    method: "POST",
    path: "/admin/keys",
    auth: "bearer",
    body: () => ({
      name: "fuzz",
      scopes: ["generate", "classify"],
      limits: { requests_per_minute: 600, tokens_per_day: 100_000 },
    }),
  },
  { method: "GET", path: "/admin/keys", auth: "bearer" },
  { method: "GET", path: `/admin/keys/${FUZZ_KEY_ID}`, auth: "bearer" },
  { method: "POST", path: `/admin/keys/${FUZZ_KEY_ID}/rotate`, auth: "bearer" },
  { method: "DELETE", path: `/admin/keys/${FUZZ_KEY_ID}`, auth: "bearer" },
  { method: "GET", path: `/admin/keys/${FUZZ_KEY_ID}/activity?limit=5`, auth: "bearer" },
  { method: "GET", path: "/admin/keys/bootstrap-1/usage?days=3", auth: "bearer" },
  {
    method: "POST",
    path: "/v1/classify",
    auth: "bearer",
    body: () => ({
      model: "spam-classifier",
      input: "Congratulations! You have won a free cruise.",
    }),
  },
  {
    method: "POST",
    path: "/v1/classify",
    auth: "bearer",
    body: () => ({ model: "spam-classifier", input: ["meeting at 3", "WIN CASH NOW"], top_k: 1 }),
  },
  {
    method: "POST",
    path: "/v1/run/spam-classifier",
    auth: "bearer",
    body: () => ({ text: "Claim your prize today" }),
  },
  {
    method: "POST",
    path: "/v1/classify",
    auth: "bearer",
    body: () => ({ model: "digit-classifier", input: [barDataUrl()], top_k: 2 }),
  },
  {
    method: "POST",
    path: "/v1/classify?model=digit-classifier",
    auth: "bearer",
    raw: { type: "image/png", bytes: barPng },
  },
  {
    method: "POST",
    path: "/v1/classify?model=digit-classifier&top_k=1",
    auth: "bearer",
    raw: { type: "image/jpeg", bytes: barJpeg },
  },
  {
    method: "POST",
    path: "/v1/classify",
    auth: "bearer",
    raw: { type: "multipart", bytes: barPng },
  },
  {
    method: "POST",
    path: "/v1/run/digit-classifier",
    auth: "bearer",
    body: () => ({ image: Array.from(barPng()) }),
  },
  {
    method: "POST",
    path: "/v1/fraud/score",
    auth: "bearer",
    body: () => ({ accounts: [{ history: [transaction("h1")], transaction: transaction("t1") }] }),
  },
  {
    method: "POST",
    path: "/v1/fraud/score",
    auth: "bearer",
    body: () => ({ model: "fraud-gru", accounts: [{ transaction: transaction("t2") }] }),
  },
  {
    method: "POST",
    path: "/v1/fraud/score",
    auth: "bearer",
    body: () => ({
      explain: true,
      accounts: [{ history: [transaction("h1")], transaction: transaction("t3") }],
    }),
  },
  {
    method: "POST",
    path: "/v2/models/spam-classifier/infer",
    auth: "bearer",
    body: () => spamTensors([1, 17, 42, 99]),
  },
  {
    method: "POST",
    path: "/v2/models/spam-classifier/versions/2.0.0/infer",
    auth: "bearer",
    body: () => spamTensors([5, 6]),
  },
  { method: "POST", path: "/v2/models/fraud-gru/infer", auth: "bearer", body: fraudTensors },
  {
    method: "POST",
    path: "/v1/webhooks/stripe",
    auth: "none",
    body: () =>
      toJson(
        stripeEvent("charge.succeeded", {
          id: "ch_fuzz",
          created: T0,
          amount: 1250,
          currency: "usd",
        }),
      ),
  },
  {
    method: "POST",
    path: "/v1/webhooks/adyen",
    auth: "none",
    body: () =>
      toJson({
        live: "false",
        notificationItems: [{ NotificationRequestItem: adyenItem("fuzz-alias") }],
      }),
  },
  {
    method: "POST",
    path: "/tokenize",
    auth: "bearer",
    body: () => ({
      model: "spam-classifier",
      prompt: "Win a free cruise",
      add_special_tokens: true,
    }),
  },
  {
    method: "POST",
    path: "/v1/tokenize",
    auth: "bearer",
    body: () => ({ model: "spam-classifier", prompt: "meeting at 3" }),
  },
  {
    method: "POST",
    path: "/detokenize",
    auth: "bearer",
    body: () => ({ model: "spam-classifier", tokens: [5, 17, 42] }),
  },
  {
    method: "POST",
    path: "/v1/detokenize",
    auth: "bearer",
    body: () => ({ model: "spam-classifier", tokens: [1, 2] }),
  },
  { method: "GET", path: "/v1/models", auth: "bearer" },
  {
    method: "POST",
    path: "/v1/chat/completions",
    auth: "bearer",
    body: () => ({
      model: "tiny-llm",
      messages: [{ role: "user", content: "Hello" }],
      max_tokens: 4,
    }),
  },
  {
    method: "POST",
    path: "/v1/chat/completions",
    auth: "bearer",
    body: () => ({
      model: "tiny-llm",
      messages: [
        { role: "user", content: "Hello" },
        { role: "assistant", content: "Hi, I" },
      ],
      add_generation_prompt: false,
      continue_final_message: true,
      chat_template_kwargs: { enable_thinking: false },
      max_tokens: 4,
      stream: true,
    }),
  },
  {
    method: "POST",
    path: "/v1/completions",
    auth: "bearer",
    body: () => ({ model: "tiny-llm", prompt: "The old house", max_tokens: 4, stream: true }),
  },
  {
    method: "POST",
    path: "/v1/completions",
    auth: "bearer",
    body: () => ({
      model: "tiny-llm",
      prompt: "The old house",
      max_tokens: 4,
      n: 2,
      seed: 3,
      temperature: 1,
      stop: ["e"],
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    }),
  },
  {
    method: "POST",
    path: "/v1/completions",
    auth: "bearer",
    body: () => ({
      model: "tiny-llm",
      prompt: [1, 333, 277],
      max_tokens: 4,
      min_tokens: 2,
      stop_token_ids: [5],
      ignore_eos: true,
    }),
  },
  {
    method: "POST",
    path: "/v1/completions",
    auth: "bearer",
    body: () => ({
      model: "tiny-llm",
      prompt: "The old house",
      max_tokens: 4,
      logprobs: 3,
      stop: ["e"],
      return_token_ids: true,
      truncate_prompt_tokens: 3,
    }),
  },
  {
    method: "POST",
    path: "/v1/completions",
    auth: "bearer",
    body: () => ({
      model: "tiny-llm",
      prompt: [[1, 333, 277, 268]],
      max_tokens: 1,
      logprobs: 1,
      echo: true,
      temperature: 0,
      n: 2,
      stream: true,
    }),
  },
  {
    method: "POST",
    path: "/v1/completions",
    auth: "bearer",
    body: () => ({
      model: "tiny-llm",
      prompt: "The old house",
      max_tokens: 0,
      logprobs: 2,
      echo: true,
    }),
  },
  {
    method: "POST",
    path: "/v1/completions",
    auth: "bearer",
    body: () => ({
      model: "tiny-llm",
      prompt: "The old house",
      max_tokens: 3,
      allowed_token_ids: [300, 301, 2],
      seed: 1,
    }),
  },
  {
    method: "POST",
    path: "/v1/completions",
    auth: "bearer",
    body: () => ({
      model: "tiny-llm",
      prompt: ["The old house", [1, 333, 277]],
      max_tokens: 3,
      n: 2,
      return_token_ids: true,
    }),
  },
  {
    method: "POST",
    path: "/v1/chat/completions",
    auth: "bearer",
    body: () => ({
      model: "tiny-llm",
      messages: [{ role: "user", content: "Hello" }],
      max_tokens: 4,
      logprobs: true,
      top_logprobs: 2,
      n: 2,
      stream: true,
    }),
  },
  {
    method: "POST",
    path: "/v1/responses",
    auth: "bearer",
    body: () => ({
      model: "tiny-llm",
      instructions: "Be brief.",
      input: [{ role: "user", content: [{ type: "input_text", text: "Hello" }] }],
      max_output_tokens: 4,
      metadata: { a: "b" },
    }),
  },
  {
    method: "POST",
    path: "/v1/responses",
    auth: "bearer",
    body: () => ({
      model: "tiny-llm",
      input: "Hello",
      max_output_tokens: 4,
      temperature: 0.5,
      stream: true,
    }),
  },
  {
    method: "POST",
    path: "/v1/run/tiny-llm",
    auth: "bearer",
    body: () => ({ prompt: "The old house", max_tokens: 4 }),
  },
  {
    method: "POST",
    path: "/v1/images/generations",
    auth: "bearer",
    body: () => ({
      model: "digit-diffusion",
      prompt: "a handwritten seven",
      n: 2,
      size: "56x56",
      steps: 2,
      seed: 1,
      stream: true,
      partial_images: 1,
    }),
  },
  {
    method: "POST",
    path: "/v1/run/digit-diffusion",
    auth: "bearer",
    body: () => ({ prompt: "digit 3", num_steps: 2, seed: 7 }),
  },
  { method: "GET", path: "/v1/fraud/cards/fuzz-card", auth: "bearer" },
  { method: "GET", path: "/v1/fraud/performance", auth: "bearer" },
  { method: "GET", path: "/v1/fraud/rules", auth: "bearer" },
  { method: "GET", path: "/v1/fraud/drift", auth: "bearer" },
  { method: "GET", path: "/v1/fraud/export", auth: "bearer" },
  // A rule that can never decide another test's payment: no mutated string is a CEL condition
  // that holds (they are unknown names or not CEL), and review changes no approval.
  {
    method: "PUT",
    path: "/v1/fraud/rules/fuzz-rule",
    auth: "bearer",
    body: () => ({ expression: "false", action: "review", enabled: false }),
  },
  {
    method: "POST",
    path: "/v1/fraud/rules/backtest",
    auth: "bearer",
    body: () => ({ expression: "transaction.amount > 2000.0 && card.new_merchant" }),
  },
  {
    method: "GET",
    path: "/v1/fraud/performance?since=2019-10-01T00:00:00Z&until=2019-11-01T00:00:00Z",
    auth: "bearer",
  },
  { method: "GET", path: "/v2", auth: "none" },
  { method: "GET", path: "/v2/", auth: "none" },
  { method: "POST", path: "/v2/repository/index", auth: "bearer", body: () => ({ ready: false }) },
  { method: "GET", path: "/v2/health/live", auth: "none" },
  { method: "GET", path: "/v2/health/ready", auth: "none" },
  { method: "GET", path: "/openapi.json", auth: "none" },
  { method: "GET", path: "/", auth: "none" },
  { method: "GET", path: "/index.html", auth: "none" },
  { method: "GET", path: "/app.js", auth: "none" },
  { method: "GET", path: "/styles.css", auth: "none" },
  { method: "GET", path: "/metrics", auth: "bearer" },
  ...MODELS.flatMap(([name, version]): Target[] => [
    { method: "GET", path: `/v1/models/${name}`, auth: "bearer" },
    { method: "GET", path: `/v2/models/${name}`, auth: "bearer" },
    { method: "GET", path: `/v2/models/${name}/ready`, auth: "bearer" },
    { method: "GET", path: `/v2/models/${name}/versions/${version}`, auth: "bearer" },
    { method: "GET", path: `/v2/models/${name}/versions/${version}/ready`, auth: "bearer" },
    { method: "GET", path: `/v2/models/${name}/config`, auth: "bearer" },
    { method: "GET", path: `/v2/models/${name}/versions/${version}/config`, auth: "bearer" },
  ]),
];

const ODD_SEGMENTS = [
  "no-such-model",
  "9.9.9",
  "%00",
  "..",
  "a".repeat(300),
  "spam-classifier%2Finfer",
  "ü",
  "{name}",
];
// Not "/": the playground's page (src/routes/playground), a documented operation.
const UNKNOWN_PATHS = [
  "/v1",
  "/v1/",
  "/v1/nothing",
  "/v1/classify/extra",
  "/v3/models",
  "/v2/models",
  "/v2/models/spam-classifier/infer/more",
  "/v1/webhooks/paypal",
  "/openapi.yaml",
];

function nested(depth: number, leaf: Json): Json {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

function oddValue(random: Random): Json {
  switch (random.int(14)) {
    case 0:
      return null;
    case 1:
      return random.next() < 0.5;
    case 2:
      return random.pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 255, 65536]);
    case 3:
      return "";
    case 4:
      return "x".repeat(random.pick([1, 1000, 120_000]));
    case 5:
      return [];
    case 6:
      return {};
    case 7:
      return nested(random.int(64) + 1, random.pick<Json>([1, "a", null, []]));
    case 8:
      return Array.from({ length: random.pick([2, 100, 20_000]) }, (_, i) => i);
    case 9:
      return "\u0000\u202e\ud83d\ude00\r\n<script>";
    case 10:
      return "NaN";
    case 11:
      return { __proto__: { polluted: true }, constructor: "x" };
    case 12:
      return Array.from({ length: 3 }, () => ({ a: random.int(3) }));
    default:
      return random.pick(["spam-classifier", "fraud-gru", "INT64", "FP32", "BYTES", "1.0.0"]);
  }
}

/** Every container in the value with the key or index that reaches into it. */
function slots(
  value: Json,
  found: Array<{ parent: Json[] | { [key: string]: Json }; key: string | number }> = [],
) {
  if (Array.isArray(value)) {
    value.slice(0, 50).forEach((item, i) => {
      found.push({ parent: value, key: i });
      slots(item, found);
    });
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      found.push({ parent: value, key });
      slots(item, found);
    }
  }
  return found;
}

function mutate(body: Json, random: Random): Json {
  const mutations = random.int(3) + 1;
  let root = body;
  for (let m = 0; m < mutations; m++) {
    const targets = slots(root);
    if (targets.length === 0 || random.next() < 0.05) {
      root = oddValue(random);
      continue;
    }
    const { parent, key } = random.pick(targets);
    const action = random.int(3);
    if (Array.isArray(parent) && typeof key === "number") {
      if (action === 0) parent.splice(key, 1);
      else parent[key] = oddValue(random);
    } else if (!Array.isArray(parent) && typeof key === "string") {
      if (action === 0) delete parent[key];
      else if (action === 1) parent[`unknown_${random.int(5)}`] = oddValue(random);
      else parent[key] = oddValue(random);
    }
  }
  return root;
}

interface Request {
  kind: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | FormData;
}

function authHeaders(target: Target, random: Random): Record<string, string> {
  return target.auth === "bearer"
    ? { authorization: `Bearer ${KEY}` }
    : random.next() < 0.1
      ? { authorization: `Bearer ${KEY}` }
      : {};
}

/** One request: mostly a route's valid body, mutated; sometimes broken in transport. */
function request(random: Random): Request {
  const target = random.pick(TARGETS);
  const headers: Record<string, string> = { ...authHeaders(target, random) };
  if (target.raw !== undefined) return rawRequest(target, target.raw, headers, random);
  const roll = random.next();
  let path = target.path;
  let method: string = target.method;
  let kind = "valid";
  let body = target.body === undefined ? undefined : JSON.stringify(target.body());
  if (body !== undefined) headers["content-type"] = "application/json";

  if (roll < 0.15) {
    kind = "valid";
  } else if (roll > 0.99 && body !== undefined) {
    kind = "huge";
    body = JSON.stringify({ padding: "x".repeat(1_100_000) });
  } else if (roll < 0.6 && target.body !== undefined) {
    kind = "mutated";
    body = JSON.stringify(mutate(target.body(), random));
  } else if (roll < 0.67 && body !== undefined) {
    kind = "malformed-json";
    body = random.pick([
      body.slice(0, 1 + random.int(body.length - 1)),
      `${body},`,
      "{",
      "[1,]",
      "{'a': 1}",
      "\u0000",
      "nul",
    ]);
  } else if (roll < 0.7 && body !== undefined) {
    kind = "empty-body";
    body = random.next() < 0.5 ? "" : undefined;
  } else if (roll < 0.77 && body !== undefined) {
    kind = "content-type";
    const type = random.pick([
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/xml",
      "application/jsonp",
      "",
    ]);
    if (type === "") delete headers["content-type"];
    else headers["content-type"] = type;
  } else if (roll < 0.85 && target.auth === "bearer") {
    kind = "auth";
    const header = random.pick([
      "",
      "Bearer",
      "Bearer nope",
      "Basic dGVzdC1rZXktMQ==",
      `Bearer ${KEY} extra`,
      `Token ${KEY}`,
      `Bearer ${"k".repeat(5000)}`,
    ]);
    if (header === "") delete headers.authorization;
    else headers.authorization = header;
  } else if (roll < 0.9) {
    kind = "path";
    const segments = path.split("/");
    if (segments.length > 3 && random.next() < 0.6) {
      segments[random.int(segments.length - 2) + 2] = random.pick(ODD_SEGMENTS);
      path = segments.join("/");
    } else {
      path = random.pick(UNKNOWN_PATHS);
    }
  } else if (roll < 0.94) {
    kind = "method";
    method = random.pick(["GET", "POST", "PUT", "DELETE", "PATCH"]);
    if (method === "GET" || method === "DELETE") body = undefined;
  } else {
    kind = "query-and-headers";
    path = `${path}?${random.pick(["a=1", "model=x&model=y", "%zz", "x=".padEnd(2000, "y")])}`;
    headers["x-request-id"] = random.pick(["fuzz", "\u00e9", "a".repeat(300)]);
  }
  return { kind, method, path, headers, ...(body === undefined ? {} : { body }) };
}

/**
 * Image bodies: valid, bytes flipped, truncated, padded with garbage, or sent under another type.
 */
function rawRequest(
  target: Target,
  raw: NonNullable<Target["raw"]>,
  headers: Record<string, string>,
  random: Random,
): Request {
  let bytes = raw.bytes();
  const roll = random.next();
  let kind = "raw-valid";
  if (roll < 0.35) {
    kind = "raw-flipped";
    bytes = bytes.slice();
    for (let i = 0, n = 1 + random.int(8); i < n; i++)
      bytes[random.int(bytes.length)] = random.int(256);
  } else if (roll < 0.6) {
    kind = "raw-truncated";
    bytes = bytes.slice(0, random.int(bytes.length));
  } else if (roll < 0.7) {
    kind = "raw-garbage";
    bytes = Uint8Array.from({ length: random.int(4096) }, () => random.int(256));
  }
  let type: string = raw.type;
  if (random.next() < 0.1)
    type = random.pick([
      "image/gif",
      "image/webp",
      "application/octet-stream",
      "image/png",
      "image/jpeg",
    ]);
  let body: Uint8Array | FormData;
  if (raw.type === "multipart") {
    const form = new FormData();
    form.append(
      "model",
      random.next() < 0.9 ? "digit-classifier" : random.pick(["spam-classifier", "nope", ""]),
    );
    form.append(
      random.next() < 0.9 ? "file" : random.pick(["image", "other"]),
      new File([bytes], "digit.png", { type: type === "multipart" ? "image/png" : type }),
    );
    body = form;
  } else {
    headers["content-type"] = type;
    body = bytes;
  }
  return { kind, method: target.method, path: target.path, headers, body };
}

describe("seeded fuzzing of every route", () => {
  let conformance: Conformance;

  beforeAll(async () => {
    await env.DB.prepare(
      "INSERT OR IGNORE INTO api_keys (id, name, key_hash, key_prefix, scopes, created_at) " +
        "VALUES (?, 'fuzz', ?, 'ei_fuzzzz', '[\"classify\"]', '2026-11-27T00:00:00.000Z')",
    )
      .bind(FUZZ_KEY_ID, "f".repeat(64))
      .run();
    const document = await (await SELF.fetch(`${BASE}/openapi.json`)).json<OpenApiDocument>();
    conformance = new Conformance(document);
  });

  it("targets every documented operation (a new route needs a line in TARGETS)", async () => {
    const document = await (await SELF.fetch(`${BASE}/openapi.json`)).json<OpenApiDocument>();
    const documented = Object.entries(document.paths).flatMap(([template, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${template}`),
    );
    const targeted = new Set(
      TARGETS.map(
        (target) => `${target.method} ${conformance.templateOf(target.path.split("?")[0]!)}`,
      ),
    );
    expect(documented.filter((operation) => !targeted.has(operation))).toEqual([]);
  });

  it.each(SEEDS)(
    "seed %i: no 500, every answer documented and matching its schema",
    async (seed) => {
      const random = generator(seed);
      const kinds = new Map<string, number>();
      const statuses = new Set<number>();
      for (let start = 0; start < REQUESTS_PER_SEED; start += CONCURRENCY) {
        const batch = Array.from(
          { length: Math.min(CONCURRENCY, REQUESTS_PER_SEED - start) },
          (_, i) => ({ n: start + i, ...request(random) }),
        );
        await Promise.all(
          batch.map(async ({ n, kind, method, path, headers, body }) => {
            kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
            const url = `${BASE}${path}`;
            const response = await SELF.fetch(url, {
              method,
              headers,
              ...(body === undefined ? {} : { body }),
            });
            const { status, body: answer } = await conformance.check(
              method,
              url,
              response,
              `seed ${seed} #${n} (${kind})`,
            );
            statuses.add(status);
            const code =
              typeof answer === "object" && answer !== null && "code" in answer
                ? answer.code
                : undefined;
            // One vocabulary: malformed JSON is invalid_json wherever a route parses JSON itself
            // (Stripe's signature is checked on the raw bytes first), and every 415 is
            // unsupported_media_type.
            if (
              kind === "malformed-json" &&
              status === 400 &&
              !path.startsWith("/v1/webhooks/stripe")
            )
              expect(code, `#${n} ${path}`).toBe("invalid_json");
            if (status === 415) expect(code).toBe("unsupported_media_type");
          }),
        );
      }
      expect(kinds.get("valid") ?? 0).toBeGreaterThan(50);
      // The run reached every kind of answer, not only the first guard's.
      expect([...statuses].sort()).toEqual(
        expect.arrayContaining([200, 400, 401, 404, 413, 415, 422]),
      );
    },
    120_000,
  );

  it("signed provider events with mutated objects are answered as documented", async () => {
    const random = generator(99);
    const statuses = new Set<number>();
    for (let n = 0; n < 60; n++) {
      const type = random.pick([
        "charge.succeeded",
        "charge.captured",
        "payment_intent.succeeded",
        "issuing_authorization.request",
        "customer.created",
        "charge.dispute.created",
        "radar.early_fraud_warning.created",
      ]);
      const object = mutate(
        {
          id: unique("ch"),
          created: T0,
          amount: 1250,
          currency: "usd",
          payment_method: "pm_1",
          payment_method_details: { card: { fingerprint: "fp" } },
          // Read by the outcome events (a dispute's charge and reason, a warning's fraud_type).
          charge: unique("ch"),
          reason: "fraudulent",
          fraud_type: "misc",
        },
        random,
      );
      const response = await deliverStripe(stripeEvent(type, object));
      const { status } = await conformance.check(
        "POST",
        `${BASE}/v1/webhooks/stripe`,
        response,
        `stripe #${n} ${type}`,
      );
      statuses.add(status);
    }
    // Signed events the service cannot score are still acknowledged (the provider would retry a
    // 4xx).
    expect([...statuses]).toContain(200);
    expect(TEST_SECRETS.STRIPE_WEBHOOK_SECRET).toMatch(/^whsec_/);
  }, 60_000);
});
