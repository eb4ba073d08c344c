// The README's error table is the complete list of codes the service can send.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../src/errors/service-error";

describe("README error table", () => {
  it("lists every ServiceError code, and only those", () => {
    const readme = readFileSync("README.md", "utf8");
    const section = readme.slice(readme.indexOf("### Errors"), readme.indexOf("## Configuration"));
    const listed = [...section.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map(
      (match) => match[2],
    );
    expect([...listed].sort()).toEqual([...ERROR_CODES].sort());
  });
});
