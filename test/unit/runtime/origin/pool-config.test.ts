// Pools in configuration (src/runtime/origin/pool-config.ts): one URL keeps working, a list of
// URLs or a JSON pool gives replicas with weights and labels, and each mistake is named.
import { describe, expect, it } from "vitest";
import {
  parsePoolJson,
  parseUrlList,
  poolConfig,
} from "../../../../src/runtime/origin/pool-config";

describe("origin pools in configuration", () => {
  it("reads one URL as one replica of weight 1, without its trailing slash", () => {
    expect(parseUrlList("ORIGIN_URL", "https://gpu.example.com/")).toEqual({
      replicas: [{ url: "https://gpu.example.com", weight: 1 }],
    });
  });

  it("reads a comma-separated list as equal replicas", () => {
    const pool = parseUrlList("ORIGIN_URL", "http://10.0.0.1:8000, http://10.0.0.2:8000");
    expect(pool).toEqual({
      replicas: [
        { url: "http://10.0.0.1:8000", weight: 1 },
        { url: "http://10.0.0.2:8000", weight: 1 },
      ],
    });
  });

  it("reads a JSON pool with weights and labels", () => {
    const pool = parsePoolJson(
      "ORIGIN_POOL",
      JSON.stringify([
        { url: "http://a:8000", weight: 2, region: "eu-west", version: "v2" },
        { url: "http://b:8000/" },
      ]),
    );
    expect(pool).toEqual({
      replicas: [
        { url: "http://a:8000", weight: 2, region: "eu-west", version: "v2" },
        { url: "http://b:8000", weight: 1 },
      ],
    });
  });

  it.each([
    ["not json", "ORIGIN_POOL is not JSON"],
    ["[]", "ORIGIN_POOL: must list at least one replica"],
    ['[{"url": "ftp://a"}]', "ORIGIN_POOL[0].url: must be an http(s) URL"],
    ['[{"url": "http://a", "weight": 0}]', "ORIGIN_POOL[0].weight:"],
    ['[{"url": "http://a", "wieght": 2}]', "ORIGIN_POOL[0]: Unrecognized key"],
    ['[{"url": "http://a"}, {"url": "http://a/"}]', "ORIGIN_POOL lists http://a twice"],
  ])("names what is wrong in ORIGIN_POOL=%s", (value, error) => {
    const pool = parsePoolJson("ORIGIN_POOL", value);
    expect("error" in pool && pool.error).toContain(error);
  });

  it("names a bad entry of a URL list, and a single bad URL", () => {
    expect(parseUrlList("ORIGIN_URL", "http://a, gpu-2:8000")).toEqual({
      error: 'ORIGIN_URL: entry 1 must be an http(s) URL, got "gpu-2:8000"',
    });
    expect(parseUrlList("ORIGIN_URL_TINY_LLM", "localhost")).toEqual({
      error: 'ORIGIN_URL_TINY_LLM must be an http(s) URL, got "localhost"',
    });
  });

  it("refuses a pool and a URL list at the same level, and gives no replicas for neither", () => {
    const both = poolConfig(
      { name: "ORIGIN_POOL", value: '[{"url":"http://a"}]' },
      { name: "ORIGIN_URL", value: "http://b" },
    );
    expect(both).toEqual({ error: "ORIGIN_POOL and ORIGIN_URL are both set; set one" });
    expect(poolConfig(undefined, undefined)).toEqual({ replicas: [] });
  });
});
