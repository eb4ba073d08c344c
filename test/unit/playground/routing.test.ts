// wrangler.jsonc sends every path to the Worker first except the playground's own files, so an API
// request never waits on an asset lookup, and every playground file is still served as an asset.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";

const ROOT = join(import.meta.dirname, "../../..");
const { assets } = unstable_readConfig({ config: join(ROOT, "wrangler.jsonc") });
const rules: string[] = Array.isArray(assets?.run_worker_first) ? assets.run_worker_first : [];
/** Files Workers static assets reads as configuration, never serves. */
const NOT_SERVED = new Set(["_headers", "_redirects", ".assetsignore"]);

describe("the playground's static assets routing", () => {
  it("serves playground/public", () => {
    expect(assets?.directory).toBe("./playground/public");
    expect(rules[0]).toBe("/*");
  });

  it("sends each playground file (and /) to the assets, nothing else", () => {
    const files = readdirSync(join(ROOT, "playground/public")).filter(
      (name) => !NOT_SERVED.has(name),
    );
    const served = rules.filter((rule) => rule.startsWith("!")).map((rule) => rule.slice(1));
    expect(served.sort()).toEqual(["/", ...files.map((name) => `/${name}`)].sort());
  });
});
