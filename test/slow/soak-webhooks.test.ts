// The SIGKILL soak, bounded: one kill -9 of `wrangler dev` under webhook load, restart on the
// same persisted state, then zero orphans, zero losses and a complete D1 copy
// (scripts/soak-webhooks.mjs; `npm run soak:webhooks` runs three kills). Two wrangler starts
// make it ~60 s on a quiet machine and ~110 s on a busy one: the slow tier runs it.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const run = promisify(execFile);

it("survives kill -9 under webhook load with no orphan and no loss", async () => {
  const bin = join(process.cwd(), "node_modules", ".bin");
  const { stdout } = await run(
    "node",
    ["scripts/soak-webhooks.mjs", "--kills", "1", "--round-seconds", "4", "--max-seconds", "120"],
    {
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      timeout: 170_000,
    },
  ).catch((error: { stdout?: string; stderr?: string }) => {
    throw new Error(`soak failed:\n${error.stdout ?? ""}\n${error.stderr ?? ""}`);
  });
  expect(stdout).toMatch(/orphans \(history without decision\): 0\n/);
  expect(stdout).toMatch(
    /losses \(acknowledged, scored, no decision\): 0; acknowledged deliveries not recorded: 0\n/,
  );
  expect(stdout).toMatch(/D1 decisions missing from the copy: 0\n/);
  expect(stdout).toMatch(/PASS\n?$/);
}, 180_000);
