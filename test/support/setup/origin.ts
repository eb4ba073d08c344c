// Global setup (Node side) for the origin adapter tests: the reference origin as a real
// process on loopback, plus a faulty origin in front of it whose first path segment says
// how it misbehaves. Their URLs reach the workerd tests through `inject`.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { TestProject } from "vitest/node";
import { startOrigin } from "../../../scripts/lib/origin.mjs";

export const ORIGIN_KEY = "origin-test-key";

/** What the faulty origin does with a request whose path starts with /<mode>[-<n>]:
 * "dies" answers 503 to everything under that prefix once it has received an inference. */
export type FaultMode = "silent" | "fail" | "garbage" | "wrong-output" | "slow-infer" | "dies";

declare module "vitest" {
  export interface ProvidedContext {
    origin: { url: string; key: string; faultyUrl: string };
  }
}

function faultyOrigin(upstream: string): Server {
  const dead = new Set<string>();
  const shuttingDown = (response: ServerResponse) =>
    response
      .writeHead(503, { "content-type": "application/json" })
      .end('{"error":"origin shutting down"}');
  return createServer(async (request, response) => {
    const [, prefix = "", ...rest] = (request.url ?? "/").split("/");
    const mode = prefix.replace(/-\d+$/, "") as FaultMode;
    const path = `/${rest.join("/")}`;
    if (mode === "silent") return; // accept, never answer
    if (dead.has(prefix)) return shuttingDown(response);
    const forward = () =>
      fetch(`${upstream}${path}`, { headers: { authorization: `Bearer ${ORIGIN_KEY}` } });
    if (request.method === "GET") {
      // Metadata and readiness come from the real origin, so the model loads.
      const answer = await forward();
      response
        .writeHead(answer.status, { "content-type": "application/json" })
        .end(await answer.text());
      return;
    }
    request.resume();
    if (mode === "dies") {
      dead.add(prefix);
      shuttingDown(response);
    } else if (mode === "fail")
      response
        .writeHead(500, { "content-type": "application/json" })
        .end('{"error":"CUDA out of memory"}');
    else if (mode === "garbage")
      response.writeHead(200, { "content-type": "application/json" }).end("<html>gateway</html>");
    else if (mode === "wrong-output") {
      const body = {
        model_name: "spam-classifier",
        outputs: [{ name: "logits", datatype: "FP32", shape: [1, 3], data: [0, 1, 2] }],
      };
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    }
    // slow-infer: never answers the POST
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const origin = await startOrigin({ ORIGIN_API_KEY: ORIGIN_KEY });
  const faulty = faultyOrigin(origin.url);
  await new Promise<void>((resolve) => faulty.listen(0, "127.0.0.1", resolve));
  const address = faulty.address();
  if (address === null || typeof address === "string") throw new Error("faulty origin has no port");
  project.provide("origin", {
    url: origin.url,
    key: ORIGIN_KEY,
    faultyUrl: `http://127.0.0.1:${address.port}`,
  });
  return async () => {
    faulty.closeAllConnections();
    faulty.close();
    await origin.stop();
  };
}
