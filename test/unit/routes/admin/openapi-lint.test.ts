// The committed openapi.json (test/workers/admin/openapi.test.ts keeps it equal to what the Worker
// serves) passes the real validators: Redocly's `recommended` ruleset (redocly.yaml; the
// warnings we accept, each with its reason, are in .redocly.lint-ignore.yaml) and
// swagger-parser's OpenAPI 3.1 schema validation.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const DOCUMENT = "openapi.json";

const LintReport = z.object({
  totals: z.object({ errors: z.number(), warnings: z.number(), ignored: z.number() }),
  problems: z.array(
    z
      .object({
        ruleId: z.string(),
        severity: z.string(),
        message: z.string(),
        location: z.array(z.object({ pointer: z.string().optional() }).loose()),
      })
      .loose(),
  ),
});

describe("openapi.json", () => {
  it("passes redocly lint (recommended) with no unaccepted warning", async () => {
    // Telemetry off: CI has no network, and the CLI must not wait on it.
    const { stdout } = await promisify(execFile)(
      "node_modules/.bin/redocly",
      ["lint", DOCUMENT, "--format", "json"],
      {
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
    const report = LintReport.parse(JSON.parse(stdout.slice(stdout.indexOf("{"))));
    const problems = report.problems.map(
      (problem) =>
        `${problem.severity} ${problem.ruleId} ` +
        `${problem.location[0]?.pointer ?? ""}: ${problem.message}`,
    );
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("passes swagger-parser validation", async () => {
    const api = await SwaggerParser.validate(DOCUMENT);
    expect(Object.keys(api.paths ?? {}).length).toBeGreaterThan(10);
  });
});
