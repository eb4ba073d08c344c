// Every example in README.md and docs/*.md runs against the service as `npm start` runs it: the
// reference origin and `wrangler dev --local` on free ports, with a fresh persisted state. Each
// ```sh/```bash block that calls curl runs in bash (`set -eo pipefail`, curl with
// --fail-with-body), each ```js block in Node; a doc's blocks run in order in one folder, so a
// block may read a file an earlier one wrote. A block after `<!-- not-run: reason -->` is
// skipped; after `<!-- status: 400 -->` every curl in it must answer that status.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrigin } from "../../scripts/lib/origin.mjs";
import { startWranglerDev } from "../../scripts/lib/wrangler-dev.mjs";
import { TEST_SECRETS } from "../support/secrets";

const ROOT = join(import.meta.dirname, "../..");
const KEY = TEST_SECRETS.API_KEYS.split(",")[0] ?? "";
const EXAMPLE_TIMEOUT_MS = 300_000;

interface Example {
  file: string;
  line: number;
  kind: "shell" | "node";
  code: string;
  skip?: string;
  status?: number;
}

/** The runnable blocks of one Markdown file, with the marker comment before each, if any. */
function extractExamples(markdown: string, file: string): Example[] {
  const lines = markdown.split("\n");
  const examples: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i] ?? "");
    if (!open) continue;
    const lang = open[1] ?? "";
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ""); i++) body.push(lines[i] ?? "");
    const code = body.join("\n");
    let before = start - 1;
    while (before >= 0 && (lines[before] ?? "").trim() === "") before--;
    const marker = lines[before] ?? "";
    const skip = /^<!--\s*not-run:\s*(.+?)\s*-->/.exec(marker)?.[1];
    const status = /^<!--\s*status:\s*(\d{3})\s*-->/.exec(marker)?.[1];
    const kind =
      (lang === "sh" || lang === "bash") && /\bcurl\b/.test(code)
        ? "shell"
        : lang === "js" || lang === "javascript"
          ? "node"
          : undefined;
    if (kind === undefined) continue;
    examples.push({
      file,
      line: start + 1,
      kind,
      code,
      ...(skip === undefined ? {} : { skip }),
      ...(status === undefined ? {} : { status: Number(status) }),
    });
  }
  return examples;
}

const docs = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];
const examplesByDoc = docs.map((file) => ({
  file,
  examples: extractExamples(readFileSync(join(ROOT, file), "utf8"), file),
}));

function run(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const timer = setTimeout(() => child.kill("SIGKILL"), EXAMPLE_TIMEOUT_MS - 5_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe("the docs' examples against the running service", () => {
  let state: string;
  let env: Record<string, string>;
  let stopOrigin: (() => Promise<void>) | undefined;
  let stopEdge: (() => void) | undefined;
  const scripts = join(ROOT, "node_modules/.cache/docs-examples");

  beforeAll(async () => {
    state = mkdtempSync(join(tmpdir(), "docs-examples-"));
    mkdirSync(scripts, { recursive: true });
    const migrations = spawnSync(
      "npx",
      ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", state],
      { cwd: ROOT, encoding: "utf8", env: { ...process.env, CI: "true" } },
    );
    if (migrations.status !== 0) throw new Error(`migrations: ${migrations.stderr}`);
    const origin = await startOrigin();
    stopOrigin = origin.stop;
    const edge = await startWranglerDev({
      persistTo: state,
      vars: { ...TEST_SECRETS, ORIGIN_URL: origin.url },
    });
    stopEdge = edge.stop;
    env = {
      BASE: edge.url,
      ORIGIN: origin.url,
      KEY,
      STRIPE_WEBHOOK_SECRET: TEST_SECRETS.STRIPE_WEBHOOK_SECRET,
      ADYEN_HMAC_KEY: TEST_SECRETS.ADYEN_HMAC_KEY,
    };
  });

  afterAll(async () => {
    stopEdge?.();
    await stopOrigin?.();
    if (state) rmSync(state, { recursive: true, force: true });
  });

  it("finds examples, and every skipped one says why", () => {
    const all = examplesByDoc.flatMap(({ examples }) => examples);
    expect(all.filter((example) => example.skip === undefined).length).toBeGreaterThan(20);
    for (const example of all) if (example.skip !== undefined) expect(example.skip).not.toBe("");
  });

  for (const { file, examples } of examplesByDoc) {
    if (examples.length === 0) continue;
    describe(file, () => {
      let cwd: string;
      beforeAll(() => {
        cwd = mkdtempSync(join(tmpdir(), "docs-example-cwd-"));
      });
      afterAll(() => rmSync(cwd, { recursive: true, force: true }));

      for (const example of examples) {
        const name = `${example.file}:${example.line} (${example.kind})`;
        if (example.skip !== undefined) {
          it.skip(`${name}: ${example.skip}`, () => {});
          continue;
        }
        it(name, { timeout: EXAMPLE_TIMEOUT_MS }, async () => {
          const result =
            example.kind === "node" ? await runNode(example, cwd) : await runShell(example, cwd);
          expect(result.code, `${name}\n${example.code}\n--- output ---\n${result.output}`).toBe(0);
          if (example.status !== undefined) {
            const statuses = readFileSync(join(cwd, ".statuses"), "utf8").trim().split("\n");
            expect(statuses.length, name).toBeGreaterThan(0);
            for (const status of statuses) expect(Number(status), name).toBe(example.status);
          }
        });
      }
    });
  }

  function runShell(example: Example, cwd: string) {
    // A block that documents an error status records each status instead of failing on it.
    const wrapper =
      example.status === undefined
        ? `curl() { command curl --fail-with-body "$@"; }`
        : ": > .statuses; curl() { command curl -s -w " +
          "'%{stderr}%{http_code}\\n' \"$@\" 2>> .statuses; }";
    return run("bash", ["-c", `set -eo pipefail\n${wrapper}\n${example.code}`], { cwd, env });
  }

  function runNode(example: Example, cwd: string) {
    // Written inside the checkout so that `import "openai"` resolves from its node_modules.
    const script = join(scripts, `${example.file.replace(/\W/g, "_")}-${example.line}.mjs`);
    writeFileSync(script, example.code);
    return run(process.execPath, [script], { cwd, env });
  }
});
