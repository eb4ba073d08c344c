// The origin as a package of its own: its bundle (built in memory with origin/build.mjs's
// options) imports only Node's built-ins and the dependencies of origin/package.json, each
// pinned to the version the root lockfile installs; its --help names every ORIGIN_* variable.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { options } from "../../../origin/build.mjs";

const Manifest = z.object({
  dependencies: z.record(z.string(), z.string()),
  devDependencies: z.record(z.string(), z.string()).optional(),
});
const Lockfile = z.object({
  packages: z.record(z.string(), z.object({ version: z.string().optional() })),
});
const origin = Manifest.parse(JSON.parse(readFileSync("origin/package.json", "utf8")));
const rootLock = Lockfile.parse(JSON.parse(readFileSync("package-lock.json", "utf8")));

/** "@scope/name/sub" → "@scope/name"; "name/sub" → "name". */
const packageOf = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

describe("origin package", () => {
  it("imports nothing but Node's built-ins and its own dependencies", async () => {
    const result = await build({ ...options, write: false, logLevel: "silent" });
    const imports = Object.values(result.metafile?.outputs ?? {}).flatMap((output) =>
      output.imports.filter((entry) => entry.external).map((entry) => entry.path),
    );
    expect(imports.length).toBeGreaterThan(0);
    const bare = new Set(imports.filter((path) => !path.startsWith("node:")).map(packageOf));
    expect([...bare].sort()).toEqual(Object.keys(origin.dependencies).sort());
  }, 60_000);

  it("pins each dependency to the version the root lockfile installs", () => {
    const pinned = { ...origin.dependencies, ...origin.devDependencies };
    for (const [name, version] of Object.entries(pinned)) {
      expect(version, name).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
      expect(rootLock.packages[`node_modules/${name}`]?.version, name).toBe(version);
    }
  });

  it("documents every ORIGIN_* variable in --help", () => {
    const names = new Set(readFileSync("origin/config.ts", "utf8").match(/ORIGIN_[A-Z_]+/g));
    const help = execFileSync(process.execPath, ["--import", "tsx", "origin/server.ts", "--help"], {
      encoding: "utf8",
    });
    for (const name of names) expect(help, name).toContain(name);
  }, 60_000);
});
