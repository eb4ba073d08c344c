// scripts/fraud/build.sh's arguments: `--csv FILE [--out DIR]` retrains on a labelled file, the
// default rebuilds the shipped model; anything else is refused (exit 2) before any step runs.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

async function refusal(...args: string[]) {
  const error = await run("bash", ["scripts/fraud/build.sh", ...args]).then(
    () => undefined,
    (e: { code: number; stderr: string }) => e,
  );
  return { code: error?.code, stderr: error?.stderr.trim() };
}

describe("scripts/fraud/build.sh arguments", () => {
  it("refuses --out without --csv: the default build writes models/fraud-gru", async () => {
    expect(await refusal("--out", "somewhere")).toEqual({
      code: 2,
      stderr: "--out goes with --csv; usage: build.sh [--csv FILE [--out DIR]]",
    });
  });

  it("refuses a flag without its value, an unknown argument and a missing file", async () => {
    expect(await refusal("--csv")).toMatchObject({ code: 2, stderr: /^--csv needs a value/ });
    expect(await refusal("--csv", "x.csv", "--out")).toMatchObject({
      code: 2,
      stderr: /^--out needs a value/,
    });
    expect(await refusal("--epochs", "3")).toMatchObject({
      code: 2,
      stderr: /^unknown argument --epochs/,
    });
    expect(await refusal("--csv", "no-such-file.csv")).toEqual({
      code: 2,
      stderr: "no such file: no-such-file.csv",
    });
  });
});
