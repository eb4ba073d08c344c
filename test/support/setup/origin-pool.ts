// Global setup (Node side) for the origin-pool tests: three reference origins as real processes
// on loopback (the tiny LLM's FP32 graph, prefix caches on), and a control server through which
// a test inside workerd starts one more origin (tracing to an OTLP collector here, if asked),
// SIGKILLs one mid-stream or SIGTERMs one (drain).
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { ChildProcess } from "node:child_process";
import type { TestProject } from "vitest/node";
import { startOrigin } from "../../../scripts/lib/origin.mjs";
import { startCollector } from "../otlp-collector";

declare module "vitest" {
  export interface ProvidedContext {
    /**
     * urls: three origins; control: POST /spawn[?chunkDelayMs=][&otlp=1] → {url}, POST /kill?url=
     * (SIGKILL), POST /term?url= (SIGTERM: it drains), POST /pause?url= and /resume?url= (SIGSTOP,
     * SIGCONT: a stall), GET /spans: what the spawned origins with
     * otlp=1 exported (the collector's CollectedSpan[]).
     */
    originPool: { urls: string[]; control: string } | null;
  }
}

/**
 * Signals the origin's server itself: startOrigin's process is tsx, which runs the server as its
 * child and relays SIGTERM, but a SIGKILL would stop tsx alone (Linux: /proc lists the child).
 */
function signal(origin: Started, name: NodeJS.Signals): void {
  const pid = origin.process.pid!;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/);
  for (const child of children.filter(Boolean)) process.kill(Number(child), name);
  if (name === "SIGKILL") origin.process.kill(name);
}

type Started = { url: string; process: ChildProcess; stop: () => Promise<void> };

const start = (env: Record<string, string> = {}): Promise<Started> =>
  startOrigin({ ORIGIN_GENERATION_GRAPH: "decoder-fp32", ...env });

export default async function setup(
  project: TestProject,
): Promise<(() => Promise<void>) | undefined> {
  if (!existsSync("models/tiny-llm/manifest.json")) {
    project.provide("originPool", null);
    return undefined;
  }
  const origins: Started[] = await Promise.all([start(), start(), start()]);
  const collector = await startCollector();
  const byUrl = (url: string | null) => origins.find((origin) => origin.url === url);
  const control = createServer(async (request, response) => {
    request.resume();
    if (request.method === "GET" && request.url === "/spans")
      return response.writeHead(200).end(JSON.stringify(collector.spans));
    const query = new URL(request.url ?? "/", "http://control").searchParams;
    const path = new URL(request.url ?? "/", "http://control").pathname;
    if (request.method === "POST" && path === "/spawn") {
      // ?chunkDelayMs=: its streamed chunks held back (a slow GPU), so a test can act mid-stream.
      const origin = await start({
        ORIGIN_FAULT_CHUNK_DELAY_MS: query.get("chunkDelayMs") ?? "0",
        // Spans go to the collector, each batch 50 ms after its first span ends.
        ...(query.get("otlp") === "1"
          ? { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: "50" }
          : {}),
      });
      origins.push(origin);
      return response.writeHead(200).end(JSON.stringify({ url: origin.url }));
    }
    const origin = byUrl(query.get("url"));
    if (request.method !== "POST" || origin === undefined) return response.writeHead(404).end();
    if (path === "/kill") signal(origin, "SIGKILL");
    else if (path === "/term") signal(origin, "SIGTERM");
    // A replica that stalls: it holds its connections open and sends nothing.
    else if (path === "/pause") signal(origin, "SIGSTOP");
    else if (path === "/resume") signal(origin, "SIGCONT");
    else return response.writeHead(404).end();
    response.writeHead(204).end();
  });
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));
  const address = control.address();
  if (address === null || typeof address === "string") throw new Error("control has no port");
  project.provide("originPool", {
    urls: origins.map((origin) => origin.url),
    control: `http://127.0.0.1:${address.port}`,
  });
  return async () => {
    control.closeAllConnections();
    control.close();
    await Promise.all(origins.map((origin) => origin.stop()));
    await collector.close();
  };
}
