// The origin runtime inside workerd, against the reference origin running as a real
// process on loopback: moving a model to the origin is a manifest change, and the
// service answers the same — same labels, same logits — or says why it cannot.
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { createApp } from "../../../src/app";
import { bundledModels } from "../../../src/models/bundled";
import { TextClassificationSchema } from "../../../src/models/manifest";
import { createRegistry } from "../../../src/models/registry";
import { edgeRuntimes, type OriginConfig } from "../../../src/runtime";
import { createServices } from "../../../src/tasks";
import { KEY, post, problem } from "../../support/workers/helpers";

const origin = inject("origin");
const [shipped] = bundledModels;
const manifest = TextClassificationSchema.parse(shipped!.manifest);
const tokenizer = shipped!.files![manifest.tokenizer.file]!;

/** An app whose spam classifier runs on the origin: the manifest says so, nothing else changes. */
function appOnOrigin(config: Partial<OriginConfig> = {}, overrides: Record<string, unknown> = {}) {
  const onOrigin = {
    ...manifest,
    preload: undefined,
    runtime: "origin",
    protocol: "oip-v2",
    ...overrides,
  };
  const registry = createRegistry(
    [{ manifest: onOrigin, files: { [manifest.tokenizer.file]: tokenizer } }],
    {
      runtimeFor: edgeRuntimes({
        url: origin.url,
        apiKey: origin.key,
        timeoutMs: 5_000,
        ...config,
      }),
    },
  );
  const services = createServices(registry);
  return createApp(() => services);
}

function request(
  app: ReturnType<typeof createApp>,
  path: string,
  body?: unknown,
): Promise<Response> {
  const init: RequestInit = {
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
  };
  if (body !== undefined) Object.assign(init, { method: "POST", body: JSON.stringify(body) });
  return Promise.resolve(app.request(`https://edge.test${path}`, init, env));
}

type Classified = {
  model_version: string;
  results: { labels: { label: string; score: number }[]; tokens: number }[];
};
type Inferred = { outputs: { name: string; shape: number[]; data: number[] }[] };

const texts = [
  "Minutes of the design review are attached; comments welcome before Friday.",
  "URGENT: you have WON $1,000,000, click here to claim your prize",
  "Re: apt-get fails on the new mirror\n\nTry apt-get update first, then install again.",
];

describe("a model whose manifest says runtime: origin", () => {
  it("classifies a padded batch with the labels and scores of the in-isolate model", async () => {
    const app = appOnOrigin();
    expect((await request(app, "/v2/health/ready")).status).toBe(200);
    const viaOrigin = await (
      await request(app, "/v1/classify", { model: manifest.name, input: texts })
    ).json<Classified>();
    const inIsolate = await (
      await post("/v1/classify", { model: manifest.name, input: texts })
    ).json<Classified>();
    expect(viaOrigin.model_version).toBe(manifest.version);
    viaOrigin.results.forEach((result, i) => {
      const local = inIsolate.results[i]!;
      expect(result.tokens).toBe(local.tokens);
      expect(result.labels.map((entry) => entry.label)).toEqual(
        local.labels.map((entry) => entry.label),
      );
      result.labels.forEach((entry, j) =>
        expect(entry.score).toBeCloseTo(local.labels[j]!.score, 4),
      );
    });
  });

  it("over a pool, steps around a replica that fails its inferences and one that is down", async () => {
    const app = appOnOrigin({
      replicas: [
        { url: `${origin.faultyUrl}/fail-37`, weight: 1 },
        { url: "http://127.0.0.1:9", weight: 1 },
        { url: origin.url, weight: 1 },
      ],
    });
    const inIsolate = await (
      await post("/v1/classify", { model: manifest.name, input: texts })
    ).json<Classified>();
    for (let call = 0; call < 4; call += 1) {
      const response = await request(app, "/v1/classify", { model: manifest.name, input: texts });
      expect(response.status).toBe(200);
      const viaPool = await response.json<Classified>();
      expect(viaPool.results.map((result) => result.labels[0]!.label)).toEqual(
        inIsolate.results.map((result) => result.labels[0]!.label),
      );
    }
  });

  it("serves Open Inference Protocol tensors through the origin: the same logits", async () => {
    const ids = [2087, 314, 1220, 259];
    const body = {
      id: "via-origin",
      inputs: [
        { name: "input_ids", shape: [1, 4], datatype: "INT64", data: ids },
        { name: "attention_mask", shape: [1, 4], datatype: "INT64", data: [1, 1, 1, 1] },
      ],
    };
    const viaOrigin = await (
      await request(appOnOrigin(), `/v2/models/${manifest.name}/infer`, body)
    ).json<Inferred>();
    const inIsolate = await (
      await post(`/v2/models/${manifest.name}/infer`, body)
    ).json<Inferred>();
    expect(viaOrigin.outputs[0]!.shape).toEqual([1, 2]);
    viaOrigin.outputs[0]!.data.forEach((value, j) =>
      expect(value).toBeCloseTo(inIsolate.outputs[0]!.data[j]!, 4),
    );
  });

  it(
    "passes the origin's refusal of the input on " + "as 422, and checks feeds before calling it",
    async () => {
      const app = appOnOrigin();
      const outOfVocabulary = await request(app, `/v2/models/${manifest.name}/infer`, {
        inputs: [
          { name: "input_ids", shape: [1, 3], datatype: "INT64", data: [5, 8_000, 7] },
          { name: "attention_mask", shape: [1, 3], datatype: "INT64", data: [1, 1, 1] },
        ],
      });
      expect(outOfVocabulary.status).toBe(422);
      expect((await problem(outOfVocabulary)).detail).toContain(
        "indices element out of data bounds",
      );
      const wrongShape = await request(app, `/v2/models/${manifest.name}/infer`, {
        inputs: [
          { name: "input_ids", shape: [3], datatype: "INT64", data: [5, 6, 7] },
          { name: "attention_mask", shape: [3], datatype: "INT64", data: [1, 1, 1] },
        ],
      });
      expect(wrongShape.status).toBe(422);
      expect((await problem(wrongShape)).field).toBe("inputs.input_ids.shape");
    },
  );
});

describe("an origin model the origin cannot serve is not ready, with the reason", () => {
  const cases: [string, Partial<OriginConfig>, Record<string, unknown>, RegExp][] = [
    ["no ORIGIN_URL", { url: undefined }, {}, /ORIGIN_URL is not set/],
    ["a wrong origin key", { apiKey: "not-the-key" }, {}, /401/],
    ["nothing listening", { url: "http://127.0.0.1:9" }, {}, /could not be reached/],
    [
      "an origin that never answers",
      { url: `${origin.faultyUrl}/silent`, timeoutMs: 300 },
      {},
      /did not answer within 300 ms/,
    ],
    [
      "a version the origin does not serve",
      {},
      { version: "9.9.9" },
      /does not serve spam-classifier 9\.9\.9/,
    ],
    [
      "a signature the origin does not have",
      {},
      {
        graphs: {
          ...manifest.graphs,
          model: {
            ...manifest.graphs.model!,
            outputs: [{ name: "logits", datatype: "FP32", shape: [-1, 3] }],
          },
        },
      },
      /declares "logits"/,
    ],
  ];
  for (const [what, config, overrides, reason] of cases) {
    it(what, async () => {
      const app = appOnOrigin(config, overrides);
      const ready = await request(app, `/v2/models/${manifest.name}/ready`);
      expect(ready.status).toBe(503);
      expect((await request(app, "/v2/health/ready")).status).toBe(503);
      const response = await request(app, "/v1/classify", { model: manifest.name, input: "hello" });
      expect(response.status).toBe(503);
      const body = await problem(response);
      expect(body.code).toBe("model_not_ready");
      expect(body.detail).toMatch(reason);
    });
  }
});

describe("an origin that fails during inference: 5xx of ours with the reason, never a 500", () => {
  const cases: [string, string, number, RegExp][] = [
    ["an origin error", "fail", 502, /failed \(500: CUDA out of memory\)/],
    ["a response that is not OIP JSON", "garbage", 502, /invalid inference response/],
    [
      "an output unlike the manifest's",
      "wrong-output",
      502,
      /returned output "logits" as FP32 \[1, 3\]/,
    ],
    ["an inference that never returns", "slow-infer", 504, /did not answer within 500 ms/],
  ];
  for (const [what, mode, status, reason] of cases) {
    it(what, async () => {
      const app = appOnOrigin({ url: `${origin.faultyUrl}/${mode}`, timeoutMs: 500 });
      expect((await request(app, `/v2/models/${manifest.name}/ready`)).status).toBe(200);
      const response = await request(app, "/v1/classify", { model: manifest.name, input: "hello" });
      expect(response.status).toBe(status);
      const body = await problem(response);
      expect(body.code).toBe(status === 504 ? "upstream_timeout" : "upstream_error");
      expect(body.detail).toMatch(reason);
    });
  }
});

describe("readiness follows the origin after a failure", () => {
  it(
    "an origin that went away makes the model " + "not ready until it answers its checks again",
    async () => {
      const app = appOnOrigin({ url: `${origin.faultyUrl}/dies-1` });
      expect((await request(app, `/v2/models/${manifest.name}/ready`)).status).toBe(200);
      const failed = await request(app, "/v1/classify", { model: manifest.name, input: "hello" });
      expect(failed.status).toBe(502);
      expect((await problem(failed)).detail).toMatch(/503: origin shutting down/);
      // The failure says nothing about the input, so readiness asks the origin again.
      expect((await request(app, `/v2/models/${manifest.name}/ready`)).status).toBe(503);
      expect((await request(app, "/v2/health/ready")).status).toBe(503);
      const refused = await request(app, "/v1/classify", { model: manifest.name, input: "hello" });
      expect(refused.status).toBe(503);
      expect((await problem(refused)).detail).toMatch(
        /does not serve spam-classifier .*503: origin shutting down/,
      );
    },
  );

  it("an origin that failed once but answers its checks is ready again", async () => {
    const app = appOnOrigin({ url: `${origin.faultyUrl}/fail` });
    expect(
      (await request(app, "/v1/classify", { model: manifest.name, input: "hello" })).status,
    ).toBe(502);
    expect((await request(app, `/v2/models/${manifest.name}/ready`)).status).toBe(200);
  });
});
