// wrangler.jsonc has no `assets`: any would put Workers' router Worker in front of every request,
// the payment webhooks' too (docs/playground.md "How it is served"). The Worker serves the
// playground's files itself, imported as text by the configuration's Text rule, which names each
// file of playground/public (test/workers/playground/files.test.ts serves them).
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";

const ROOT = join(import.meta.dirname, "../../..");
const config = unstable_readConfig({ config: join(ROOT, "wrangler.jsonc") });
const rules: { type: string; globs: string[] }[] = config.rules;

describe("the playground's files in wrangler.jsonc", () => {
  it("has no static assets, so no router Worker in front of the API", () => {
    expect(config.assets).toBeUndefined();
  });

  it("imports each file of playground/public as text, and nothing else there", () => {
    const text = rules.filter(({ type }) => type === "Text").flatMap(({ globs }) => globs);
    const files = readdirSync(join(ROOT, "playground/public")).sort();
    expect(text.filter((glob) => glob.includes("playground/")).sort()).toEqual(
      files.map((name) => `**/playground/public/${name}`),
    );
  });
});
