// The origin benchmarks' load generator: one streamed vLLM completion over node:http with
// keep-alive, not fetch. It shares the two cores with the origin it measures, and undici's
// fetch with its web streams cost the client ≈ 85 µs of CPU per token at 16 streams against
// node:http's ≈ 23–37 µs (measured side by side, 2026-11-23): CPU the origin being measured
// would otherwise lose to its client.
import http from "node:http";

const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });

/**
 * Streams one completion of `ids` (greedy, ignore_eos) from the origin at `url`; resolves with
 * the arrival time (performance.now()) of each token id received.
 */
export function streamCompletion(url, model, ids, maxTokens) {
  const target = new URL("/v1/completions", url);
  const body = JSON.stringify({
    model,
    prompt: ids,
    max_tokens: maxTokens,
    temperature: 0,
    ignore_eos: true,
    stream: true,
    return_token_ids: true,
  });
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (response) => {
        response.setEncoding("utf8");
        if (response.statusCode !== 200) {
          let text = "";
          response.on("data", (chunk) => (text += chunk));
          response.on("end", () =>
            reject(new Error(`origin answered ${response.statusCode}: ${text}`)),
          );
          return;
        }
        const arrivals = [];
        let buffer = "";
        response.on("data", (chunk) => {
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf("\n\n")) !== -1) {
            const data = buffer.slice(6, end);
            buffer = buffer.slice(end + 2);
            if (data === "[DONE]") continue;
            const now = performance.now();
            for (let i = JSON.parse(data).choices[0]?.token_ids?.length ?? 0; i > 0; i--)
              arrivals.push(now);
          }
        });
        response.on("end", () => resolve(arrivals));
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** A metric's value (the first series of it) on the origin's /metrics. */
export async function originMetric(url, name) {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(
    text
      .split("\n")
      .find((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      ?.split(" ")
      .at(-1) ?? 0,
  );
}
