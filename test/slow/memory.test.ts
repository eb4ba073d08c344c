// docs/memory.md's table is a contract: each line's live total (a heap snapshot: JS heap,
// ArrayBuffers, compiled WASM code) measured inside workerd under 64 connections must stay
// within the line's ceiling. Five fresh
// `wrangler dev` starts (up to 120 s each on a busy machine) make its time depend on the load,
// so it gets the time they may take rather than a quiet machine's: only memory fails it.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, it } from "vitest";

it("every line of docs/memory.md's table holds under load", { timeout: 900_000 }, async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "scripts/measure-memory.mjs",
      "--check",
      "docs/memory.md",
      "--seconds",
      "3",
      "--connections",
      "64",
    ],
    { timeout: 880_000 },
  ).catch((error: { stdout?: string; stderr?: string }) => {
    throw new Error(`memory check failed:\n${error.stdout ?? ""}\n${error.stderr ?? ""}`);
  });
  console.log(stdout);
  expect(stdout).toMatch(/all edge models/);
});
