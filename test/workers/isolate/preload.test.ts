// Models preloaded while the isolate starts (manifest `preload`, src/tasks/preload.ts): their
// sessions exist before the first request, which then creates none; a model not marked
// loads on its first request as before; a preload that fails leaves the others serving.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import { isolate } from "../../../src/isolate";
import { bundledModels } from "../../../src/models/bundled";
import { ManifestSchema, type Manifest } from "../../../src/models/manifest";
import { createRegistry, type ModelEntry } from "../../../src/models/registry";
import { edgeRuntimes, wasmSessionsCreated } from "../../../src/runtime";
import { createServices } from "../../../src/tasks";
import { preloadModels } from "../../../src/tasks/preload";
import { get, post } from "../../support/workers/helpers";

const PRELOADED = ["spam-classifier", "fraud-gru"];

function entry(name: string): ModelEntry {
  const found = bundledModels.find(
    (candidate) => ManifestSchema.parse(candidate.manifest).name === name,
  );
  if (found === undefined) throw new Error(`${name} is not bundled`);
  return found;
}

/** The bundled entry with its manifest changed (the shipped files stay as they are). */
function changed(name: string, change: (manifest: Manifest) => unknown): ModelEntry {
  const shipped = entry(name);
  return { ...shipped, manifest: change(ManifestSchema.parse(shipped.manifest)) };
}

function metric(text: string, name: string): number {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no ${name} in /metrics`);
  return Number(line.slice(name.length + 1));
}

const headers = { authorization: "Bearer test-key-1", "content-type": "application/json" };
const request = (path: string, init: RequestInit = {}) =>
  new Request(`https://edge.test${path}`, { ...init, headers });
const fraudAccount = {
  history: [],
  transaction: {
    id: "t1",
    card_id: "card_preload",
    timestamp: "2019-10-01T03:02:00Z",
    amount: 19.99,
    currency: "USD",
    method: "online",
    merchant: { id: "9120044177342239866", mcc: "5732" },
  },
};

describe("preloaded models", () => {
  it(
    "the manifests mark the text and fraud models, and " +
      "only a model running in the isolate may be marked",
    () => {
      const marked = bundledModels
        .map((shipped) => ManifestSchema.parse(shipped.manifest))
        .filter((manifest) => manifest.preload === true);
      expect(marked.map((manifest) => manifest.name).sort()).toEqual([...PRELOADED].sort());
      const originLlm = changed("tiny-llm", (manifest) => ({ ...manifest, preload: true }));
      const parsed = ManifestSchema.safeParse(originLlm.manifest);
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues.map((issue) => issue.path.join("."))).toContain("preload");
    },
  );

  it(
    "exist before the first request: readiness " + "and a first classification create no session",
    async () => {
      // The Worker's top level started the preload (src/index.ts); this joins it.
      const outcomes = await isolate.preload();
      expect(outcomes).toEqual(PRELOADED.map((model) => ({ model, ok: true })));
      const before = await (await get("/metrics")).text();
      const created = metric(before, "edge_wasm_sessions_created_total");
      expect(created).toBeGreaterThanOrEqual(PRELOADED.length);
      for (const model of PRELOADED)
        expect(before).toContain(`edge_model_loaded{model="${model}"} 1`);

      for (const model of PRELOADED)
        expect((await get(`/v2/models/${model}/ready`)).status).toBe(200);
      const classified = await post("/v1/classify", {
        model: "spam-classifier",
        input: "Minutes of the design review are attached.",
      });
      expect(classified.status).toBe(200);
      expect((await post("/v1/fraud/score", { accounts: [fraudAccount] })).status).toBe(200);
      expect(metric(await (await get("/metrics")).text(), "edge_wasm_sessions_created_total")).toBe(
        created,
      );
    },
  );

  it(
    "a model not marked preload (the digit classifier) " +
      "is loaded on its first request, as before",
    async () => {
      await isolate.preload();
      const before = await (await get("/metrics")).text();
      expect(before).toContain('edge_model_loaded{model="digit-classifier"} 0');
      const created = metric(before, "edge_wasm_sessions_created_total");
      expect((await get("/v2/models/digit-classifier/ready")).status).toBe(200);
      const after = await (await get("/metrics")).text();
      expect(after).toContain('edge_model_loaded{model="digit-classifier"} 1');
      expect(metric(after, "edge_wasm_sessions_created_total")).toBe(created + 1);

      // The same holds for any registry: preloading skips what its manifest does not mark.
      const services = createServices(
        createRegistry([changed("fraud-gru", (manifest) => ({ ...manifest, preload: false }))], {
          runtimeFor: edgeRuntimes(),
        }),
      );
      expect(await preloadModels(services)).toEqual([]);
      expect(services.get("fraud-gru")?.state()).toBe("unloaded");
      const sessions = wasmSessionsCreated();
      const app = createApp(() => services);
      expect((await app.request(request("/v2/models/fraud-gru/ready"), {}, env)).status).toBe(200);
      expect(services.get("fraud-gru")?.state()).toBe("ready");
      // Its graph and its attribution graph.
      expect(wasmSessionsCreated()).toBe(sessions + 2);
    },
  );

  it(
    "a preload that fails (a wrong sha256) leaves the " +
      "other models serving, and the request path tries again",
    async () => {
      const tampered = changed("spam-classifier", (manifest) => {
        const graph = manifest.graphs.model;
        if (graph === undefined) throw new Error("the spam classifier has a model graph");
        return {
          ...manifest,
          graphs: { ...manifest.graphs, model: { ...graph, sha256: "0".repeat(64) } },
        };
      });
      const services = createServices(
        createRegistry([tampered, entry("fraud-gru")], { runtimeFor: edgeRuntimes() }),
      );
      const outcomes = await preloadModels(services);
      expect(outcomes).toEqual([
        { model: "spam-classifier", ok: false, error: expect.stringContaining("integrity") },
        { model: "fraud-gru", ok: true },
      ]);
      expect(services.get("spam-classifier")?.state()).toBe("failed");

      const app = createApp(() => services);
      const scored = await app.request(
        request("/v1/fraud/score", {
          method: "POST",
          body: JSON.stringify({ accounts: [fraudAccount] }),
        }),
        {},
        env,
      );
      expect(scored.status).toBe(200);
      const classified = await app.request(
        request("/v1/classify", {
          method: "POST",
          body: JSON.stringify({ model: "spam-classifier", input: "hello" }),
        }),
        {},
        env,
      );
      expect(classified.status).toBe(503);
      expect(await classified.json()).toMatchObject({ code: "model_not_ready" });
      expect(services.get("spam-classifier")?.state()).toBe("failed");
    },
  );
});
