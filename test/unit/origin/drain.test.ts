// The built origin (node origin/dist/server.js) drains on SIGTERM: new work gets 503 with
// Retry-After, readiness 503 while liveness stays 200, admitted requests finish, and the
// process exits 0; with a short grace period, what still runs ends with vLLM's error event
// and [DONE]. Every assertion waits on an event (a line, an exit), never on a duration.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const TEST_MS = 240_000;
let modelsDir: string;

interface Origin {
  url: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startBuiltOrigin(flags: string[]): Promise<Origin> {
  const child = spawn(
    process.execPath,
    ["origin/dist/server.js", "--port", "0", "--models", modelsDir, ...flags],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  // "close", not "exit": by then the output it wrote has been read too.
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /origin listening on (http:\/\/\S+)/.exec(output);
      if (match && /origin models loaded: .*ready/.test(output))
        resolve({ url: match[1]!, child, output: () => output, exited });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    void exited.then((code) => reject(new Error(`origin exited with ${code}:\n${output}`)));
  });
}

/** Resolves once the origin's output matches `pattern`. */
function outputShows(origin: Origin, pattern: RegExp): Promise<void> {
  return new Promise((resolve) => {
    if (pattern.test(origin.output())) return resolve();
    const listener = () => {
      if (!pattern.test(origin.output())) return;
      origin.child.stdout?.off("data", listener);
      resolve();
    };
    origin.child.stdout?.on("data", listener);
  });
}

/**
 * A POST whose body waits for `finish()`. It resolves once the server has answered
 * `Expect: 100-continue`, which Node's server does as it hands the request to the app: from
 * then on the request is admitted and in flight.
 */
function heldRequest(url: string, body: unknown) {
  const json = JSON.stringify(body);
  const request = httpRequest(`${url}/v1/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(json),
      expect: "100-continue",
    },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.once("error", reject);
    request.once("response", (answer) => {
      let text = "";
      answer.setEncoding("utf8");
      answer.on("data", (chunk: string) => {
        text += chunk;
      });
      answer.once("end", () => resolve({ status: answer.statusCode ?? 0, body: text }));
    });
  });
  return new Promise<{ finish: () => typeof response }>((resolve, reject) => {
    request.once("error", reject);
    request.once("continue", () =>
      resolve({
        finish: () => {
          request.end(json);
          return response;
        },
      }),
    );
    request.flushHeaders();
  });
}

const completion = (maxTokens: number) => ({
  model: "tiny-llm",
  prompt: [1, 5, 6],
  max_tokens: maxTokens,
  temperature: 0,
  ignore_eos: true,
  stream: true,
});

/** An SSE reader: `next()` gives the next event's data, `rest()` the remaining ones. */
function events(response: Response) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const next = async (): Promise<string | undefined> => {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        expect(event.startsWith("data: ")).toBe(true);
        return event.slice("data: ".length);
      }
      const { value, done } = await reader.read();
      if (done) return undefined;
      buffer += value;
    }
  };
  const rest = async () => {
    const out: string[] = [];
    for (let event = await next(); event !== undefined; event = await next()) out.push(event);
    return out;
  };
  return { next, rest };
}

const post = (url: string, body: unknown) =>
  fetch(`${url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

beforeAll(() => {
  execFileSync(process.execPath, ["origin/build.mjs"], { stdio: "inherit" });
  modelsDir = mkdtempSync(join(tmpdir(), "origin-drain-"));
  cpSync("models/tiny-llm", join(modelsDir, "tiny-llm"), { recursive: true });
}, TEST_MS);
afterAll(() => rmSync(modelsDir, { recursive: true, force: true }));

describe("origin drain on SIGTERM", () => {
  it(
    "refuses new work, reports not ready, lets admitted requests finish, exits 0",
    async () => {
      const origin = await startBuiltOrigin(["--drain-timeout", "600000"]);
      try {
        const stream = events(await post(origin.url, completion(400)));
        const first = JSON.parse((await stream.next())!);
        expect(first.choices[0].finish_reason).toBeNull();

        // Admitted before SIGTERM and still uploading its body: it holds the drain open
        // until this test finishes it, so the probes below meet a draining origin.
        const held = await heldRequest(origin.url, completion(20));

        origin.child.kill("SIGTERM");
        await outputShows(origin, /"event":"drain_started"/);

        const refused = await post(origin.url, completion(5));
        expect(refused.status).toBe(503);
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(await refused.json()).toMatchObject({ error: { code: 503 } });
        const infer = await fetch(`${origin.url}/v2/models/tiny-llm/infer`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        expect(infer.status).toBe(503);
        expect(infer.headers.get("content-type")).toBe("application/problem+json");
        expect(infer.headers.get("retry-after")).not.toBeNull();
        expect((await fetch(`${origin.url}/health`)).status).toBe(503);
        expect((await fetch(`${origin.url}/v2/health/ready`)).status).toBe(503);
        expect((await fetch(`${origin.url}/v2/health/live`)).status).toBe(200);

        // The stream running at SIGTERM completes: every token, its finish, then [DONE].
        const rest = await stream.rest();
        expect(rest.at(-1)).toBe("[DONE]");
        const chunks = [first, ...rest.slice(0, -1).map((event) => JSON.parse(event))];
        expect(chunks.at(-1).choices[0].finish_reason).toBe("length");
        expect(chunks).toHaveLength(400);

        const late = await held.finish();
        expect(late.status).toBe(200);
        expect(late.body.trimEnd().endsWith("data: [DONE]")).toBe(true);

        expect(await origin.exited).toBe(0);
        expect(origin.output()).toContain('"event":"drain_finished"');
        expect(origin.output()).not.toContain('"event":"drain_expired"');
      } finally {
        origin.child.kill("SIGKILL");
      }
    },
    TEST_MS,
  );

  it(
    "cuts what still runs when the grace period ends: vLLM's error event, then [DONE]",
    async () => {
      // One row at a time: the streams behind the first wait their turn, so they are still
      // unfinished whenever the (zero) grace period ends.
      const origin = await startBuiltOrigin(["--drain-timeout", "0", "--max-batch", "1"]);
      try {
        const streams = await Promise.all(
          [0, 1, 2].map(async () => events(await post(origin.url, completion(500)))),
        );
        const first = await streams[0]!.next();
        expect(first).toBeDefined();
        origin.child.kill("SIGTERM");

        const endings = await Promise.all(streams.map((stream) => stream.rest()));
        for (const events of endings) expect(events.at(-1)).toBe("[DONE]");
        const errors = endings.map((events) => events.at(-2)).filter((e) => e?.includes('"error"'));
        expect(errors.length).toBeGreaterThan(0);
        for (const error of errors)
          expect(JSON.parse(error!).error).toMatchObject({
            code: 503,
            type: "ServiceUnavailableError",
          });

        expect(await origin.exited).toBe(0);
        expect(origin.output()).toContain('"event":"drain_expired"');
      } finally {
        origin.child.kill("SIGKILL");
      }
    },
    TEST_MS,
  );
});
