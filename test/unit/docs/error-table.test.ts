// docs/api.md's error table is the complete list of codes the service can send.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../../src/errors/service-error";

describe("the error table in docs/api.md", () => {
  it("lists every ServiceError code, and only those", () => {
    const page = readFileSync("docs/api.md", "utf8");
    const section = page.slice(page.indexOf("## Errors"));
    const listed = [...section.matchAll(/^\|\s*(\d{3})\s*\|\s*`([a-z_]+)`\s*\|/gm)].map(
      (match) => match[2],
    );
    expect([...listed].sort()).toEqual([...ERROR_CODES].sort());
  });
});
