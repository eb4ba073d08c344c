// A Worker as `wrangler deploy` would upload it, run in workerd without `wrangler dev`: the
// bundle from `wrangler deploy --dry-run --outdir`, its bindings from the wrangler
// configuration (wrangler's own `unstable_getMiniflareWorkerOptions`), served by Miniflare's
// workerd on a free loopback port. No dev proxy in front of it (a second workerd that reads
// every response and shares the machine's cores), no trace collector (a tail Worker wrangler
// dev attaches to every Worker) and no inspector: the nearest this machine gets to a
// deployed Worker, for the benchmarks that read the Worker's CPU from its process.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Miniflare, convertV4MiniflareOptions } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { processTree } from "./process-cpu.mjs";
import { withApiKey } from "./wrangler-dev.mjs";

/** The direct children of this process that run workerd. */
const workerdChildren = () =>
  [...(processTree(process.pid) ?? [])]
    .filter(([, stat]) => stat?.ppid === process.pid && stat.name === "workerd")
    .map(([pid]) => pid);

/**
 * workerd run through `stdbuf -oL`, so each line it prints reaches Miniflare at once: into a pipe
 * its stdout is block-buffered, and what is still buffered when it stops is lost.
 */
function lineBufferedWorkerd(dir) {
  const workerd = createRequire(import.meta.url)("workerd").default;
  const path = join(dir, "workerd");
  writeFileSync(path, `#!/bin/sh\nexec stdbuf -oL ${JSON.stringify(workerd)} "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/**
 * A module's type by the configuration's rules, as wrangler typed it when bundling. wrangler names
 * an attached module `<sha1>-<its file name>`, so a rule's glob is matched on that name (its last
 * segment), before `.js` means the bundle's own code: the playground's script is text.
 */
export function moduleType(file, rules) {
  const name = /^[0-9a-f]{40}-(.+)$/.exec(file)?.[1] ?? file;
  const rule = rules.find(({ include }) =>
    include.some((glob) => {
      const last = glob.split("/").at(-1) ?? glob;
      return last.startsWith("*") ? name.endsWith(last.slice(1)) : name === last;
    }),
  );
  if (rule !== undefined) return rule.type;
  if (file.endsWith(".js") || file.endsWith(".mjs")) return "ESModule";
  throw new Error(`no module rule for ${file}`);
}

/**
 * Bundles the Worker of `config` and serves it in workerd.
 * @param {{ config?: string, vars: Record<string, string>, persistTo: string, cwd?: string,
 *   inspectorPort?: number, traceGc?: boolean, minify?: boolean, direct?: boolean }} options
 *   Its API_KEYS: `vars`' own, or a fresh key (`headers` send it), whatever .dev.vars holds.
 *   `cwd`: the checkout to bundle (default: this one); `config` is relative to it.
 *   `inspectorPort`: the devtools inspector there (`inspectorUrl`, the Worker's). `traceGc`:
 *   workerd runs with V8's `--trace-gc --trace-gc-nvp`, which only print each collection as one
 *   JSON record (`gcLines()`: the lines so far, every isolate's; see gc-trace.mjs).
 *   `minify: false`: the bundle unminified whatever the configuration says (profiles that name
 *   the bundle's own functions). `direct`:
 *   `url` is the Worker's own socket (Miniflare's `unsafeDirectSockets`), without Miniflare's
 *   entry Worker in front, which a deployed Worker lacks (an isolate of its own on the same
 *   thread: 0.2–0.3 ms of CPU a request here, and its own collections). With static assets the
 *   socket leads to the assets router first, as a deployed Worker's requests do (this
 *   repository's Worker has none: src/routes/playground).
 * @returns {Promise<{ url: string, pid: number, apiKey: string, inspectorUrl?: string,
 *   headers: { authorization: string }, gcLines: () => string[], stop: () => Promise<void> }>}
 *   `pid`: the workerd process
 */
export async function startBundledWorker({
  config = "wrangler.jsonc",
  vars,
  persistTo,
  cwd = process.cwd(),
  inspectorPort,
  traceGc = false,
  minify,
  direct = false,
}) {
  const keyed = withApiKey(vars);
  const outdir = mkdtempSync(join(tmpdir(), "workerd-bundle-"));
  const minifyFlag = minify === undefined ? [] : [minify ? "--minify" : "--no-minify"];
  execFileSync(
    "npx",
    ["wrangler", "deploy", "--dry-run", "--outdir", outdir, "--config", config, ...minifyFlag],
    { stdio: "ignore", cwd },
  );
  const { workerOptions } = unstable_getMiniflareWorkerOptions(resolve(cwd, config));
  const { modulesRules: rules = [], ...options } = workerOptions;
  const files = readdirSync(outdir).filter(
    (file) => !file.endsWith(".map") && file !== "README.md",
  );
  const modules = files.map((file) => ({
    path: join(outdir, file),
    type: moduleType(file, rules),
  }));
  // The entry module first: workerd starts the Worker from the first module.
  modules.sort(
    (a, b) => Number(b.path.endsWith("/index.js")) - Number(a.path.endsWith("/index.js")),
  );
  const before = new Set(workerdChildren());
  const gcLines = [];
  // Miniflare reads workerd's V8 flags and its path from these variables when it starts it.
  const saved = {
    MINIFLARE_WORKERD_V8_FLAGS: process.env.MINIFLARE_WORKERD_V8_FLAGS,
    MINIFLARE_WORKERD_PATH: process.env.MINIFLARE_WORKERD_PATH,
  };
  if (traceGc) {
    process.env.MINIFLARE_WORKERD_V8_FLAGS = "--trace-gc --trace-gc-nvp";
    process.env.MINIFLARE_WORKERD_PATH = lineBufferedWorkerd(mkdtempSync(join(outdir, "bin-")));
  }
  const miniflare = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      // workerd's output, line by line: the collections apart, printed as Miniflare would.
      ...(traceGc
        ? {
            handleStructuredLogs: ({ level, message }) => {
              if (/ ms: GC: \{/.test(message)) gcLines.push(message);
              else (level === "error" ? console.error : console.log)(message);
            },
          }
        : {}),
      // Where `wrangler dev --persist-to persistTo` keeps its state, so migrations applied with
      // `wrangler d1 migrations apply --local --persist-to persistTo` are this Worker's.
      resourcePersistencePath: resolve(persistTo, "v3"),
      ...(inspectorPort === undefined ? {} : { inspectorPort }),
      workers: [
        {
          ...options,
          name: "worker",
          modulesRoot: outdir,
          modules,
          bindings: { ...options.bindings, ...keyed.vars },
          ...(inspectorPort === undefined ? {} : { unsafeInspectorProxy: true }),
          ...(direct ? { unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }] } : {}),
        },
      ],
    }),
  );
  try {
    const url = await miniflare.ready.finally(() => {
      if (!traceGc) return;
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });
    const [pid] = workerdChildren().filter((child) => !before.has(child));
    if (pid === undefined) throw new Error("no workerd process found for the bundled Worker");
    return {
      url: direct ? (await miniflare.unsafeGetDirectURL("worker")).origin : url.origin,
      ...(inspectorPort === undefined
        ? {}
        : { inspectorUrl: `ws://127.0.0.1:${inspectorPort}/worker` }),
      pid,
      apiKey: keyed.apiKey,
      headers: keyed.headers,
      gcLines: () => [...gcLines],
      stop: async () => {
        await miniflare.dispose();
        rmSync(outdir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await miniflare.dispose();
    rmSync(outdir, { recursive: true, force: true });
    throw error;
  }
}
