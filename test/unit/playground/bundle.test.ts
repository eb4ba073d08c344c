// The committed playground bundle (playground/public/app.js, served as a static asset) is what
// its sources build to today: after changing playground/src, run `npm run playground:build`.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildPlayground, OUTPUT } from "../../../scripts/build-playground.mjs";

describe("playground/public/app.js", () => {
  it("equals a fresh build of playground/src", async () => {
    const committed = readFileSync(OUTPUT, "utf8");
    expect(committed === (await buildPlayground()), "run `npm run playground:build`").toBe(true);
  });

  it("is loaded, with the styles, from this origin only", () => {
    const page = readFileSync(join(dirname(OUTPUT), "index.html"), "utf8");
    const urls = [...page.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((match) => match[1]);
    expect(urls).toContain("/app.js");
    for (const url of urls) expect(url).toMatch(/^\/(?!\/)/);
  });
});
