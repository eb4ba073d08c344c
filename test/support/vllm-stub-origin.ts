// A small vLLM-compatible origin for the edge's generation tests and benchmark, used until the
// reference origin (origin/, llm-origin's engine host) is merged: POST /v1/completions with token
// ids in and out, streamed exactly as vllm-project/vllm
// vllm/entrypoints/openai/serving_completion.py frames it, decoding the tiny LLM with
// onnxruntime-node through the same decode loop the edge runs in WASM. It records every request's
// steps and whether its client left, so tests can see aborts at the origin. A path prefix picks a
// misbehaviour: /429, /503, /fail-after-N, /silent, /mute (answers 200 and never sends a token),
// /slow-first-N (200 at once, the first token after N ms), /flaky-N (the first N requests under
// that prefix answer 502), /ok (none); /burst… (e.g. /burst, /burst-fail-after-N) holds the whole
// stream back and sends it in one write, so the edge reads many events at once; /interval-N sends N
// token ids per chunk after the first, as vLLM does with --stream-interval N; /cached-N (or
// /burst-cached-N) reports N cached prompt tokens in its usage chunk (vLLM's
// prompt_tokens_details), sent 50 ms after the finish (in one write with it under /burst-);
// /usage-late sends the usage chunk 2 s after the finish; /max-logprobs-N refuses `logprobs` above
// N as vLLM started with --max-logprobs N does (vllm/sampling_params.py _validate_logprobs: a 400
// with its message).
import { createServer, type IncomingMessage, type Server } from "node:http";
import { readFileSync } from "node:fs";
import * as ort from "onnxruntime-node";
import { TextGenerationSchema } from "../../src/models/manifest";
import { createOrtRuntime } from "../../src/runtime/ort-runtime";
import { decodeLoop } from "../../src/runtime/wasm/decode-loop";

export interface StubRequest {
  id: number;
  prefix: string;
  promptTokens: number;
  maxTokens: number;
  /** Decode steps run (one token each). */
  steps: number;
  /** Steps run after the client left (must stay ≤ 1). */
  stepsAfterAbort: number;
  aborted: boolean;
  finished: boolean;
  /** The client's port: requests on one kept-alive connection share it. */
  clientPort: number | undefined;
  /** The W3C trace context and request id the edge sent. */
  traceparent: string | undefined;
  requestId: string | undefined;
}

export interface VllmStub {
  url: string;
  requests: StubRequest[];
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  let body = "";
  for await (const chunk of request) body += String(chunk);
  return body;
}

/**
 * Starts the stub on a free loopback port, serving `modelDir`'s manifest with `graph` (default: the
 * manifest's).
 */
export async function startVllmStub(modelDir: string, graph?: string): Promise<VllmStub> {
  const manifest = TextGenerationSchema.parse(
    JSON.parse(readFileSync(`${modelDir}/manifest.json`, "utf8")),
  );
  const config = { ...manifest.generation, graph: graph ?? manifest.generation.graph };
  const decoder = manifest.graphs[config.graph];
  if (decoder === undefined) throw new Error(`no graph ${config.graph}`);
  const bytes = readFileSync(`${modelDir}/${decoder.file}`);
  const runtime = createOrtRuntime(
    {
      kind: "native",
      Tensor: ort.Tensor,
      createSession: (model) =>
        ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1 }),
    },
    {
      inputs: decoder.inputs,
      outputs: decoder.outputs,
      loadModel: async () => new Uint8Array(bytes),
    },
  );
  await runtime.load();
  const loop = decodeLoop(runtime.tensors!, config);
  const requests: StubRequest[] = [];
  const flaky = new Map<string, number>();

  const server: Server = createServer(async (request, response) => {
    const [, first = "", ...rest] = (request.url ?? "/").split("/");
    const plain = first.startsWith("v1") || first === "_stub";
    const prefix = plain ? "ok" : first;
    const path = plain ? (request.url ?? "/") : `/${rest.join("/")}`;
    if (request.method === "GET" && path === "/_stub/requests") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(requests));
      return;
    }
    const file = /^\/_stub\/files\/([\w.-]+)$/.exec(path);
    if (request.method === "GET" && file !== null) {
      // The model's files, for tests that put a graph into R2 for the in-isolate loop.
      response
        .writeHead(200, { "content-type": "application/octet-stream" })
        .end(readFileSync(`${modelDir}/${file[1]}`));
      return;
    }
    if (request.method === "GET" && path === "/v1/models") {
      response.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          object: "list",
          data: [{ id: manifest.name, object: "model", max_model_len: config.contextLength }],
        }),
      );
      return;
    }
    if (request.method !== "POST" || path !== "/v1/completions") {
      response
        .writeHead(404, { "content-type": "application/json" })
        .end('{"error":{"message":"not found","type":"NotFoundError","code":404}}');
      return;
    }
    const body = JSON.parse(await readBody(request));
    if (prefix === "429" || prefix === "503") {
      response.writeHead(Number(prefix), {
        "content-type": "application/json",
        "retry-after": "7",
      });
      response.end(
        JSON.stringify({
          error: {
            message: "The server is at capacity",
            type: "ServiceUnavailableError",
            code: Number(prefix),
          },
        }),
      );
      return;
    }
    const maxLogprobs = /^max-logprobs-(\d+)$/.exec(prefix);
    if (
      maxLogprobs &&
      typeof body.logprobs === "number" &&
      body.logprobs > Number(maxLogprobs[1])
    ) {
      const message =
        `Requested sample logprobs of ${body.logprobs}, ` +
        `which is greater than max allowed: ${maxLogprobs[1]}`;
      response
        .writeHead(400, { "content-type": "application/json" })
        .end(
          JSON.stringify({ error: { message, type: "BadRequestError", param: null, code: 400 } }),
        );
      return;
    }
    const flakyMatch = /^flaky-(\d+)$/.exec(prefix);
    if (flakyMatch) {
      const seen = flaky.get(prefix) ?? 0;
      flaky.set(prefix, seen + 1);
      if (seen < Number(flakyMatch[1])) {
        response
          .writeHead(502, { "content-type": "application/json" })
          .end('{"error":{"message":"bad gateway","type":"BadGateway","code":502}}');
        return;
      }
    }
    if (prefix === "silent") return; // accepts, never answers
    if (prefix === "mute") {
      response.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
      return;
    }
    const record: StubRequest = {
      id: requests.length,
      prefix,
      promptTokens: body.prompt.length,
      maxTokens: body.max_tokens,
      steps: 0,
      stepsAfterAbort: 0,
      aborted: false,
      finished: false,
      clientPort: request.socket.remotePort,
      traceparent: request.headers.traceparent as string | undefined,
      requestId: request.headers["x-request-id"] as string | undefined,
    };
    requests.push(record);
    const abort = new AbortController();
    response.on("close", () => {
      if (!record.finished) {
        record.aborted = true;
        abort.abort();
      }
    });
    const burst = prefix.startsWith("burst");
    const failAfter = /^(?:burst-)?fail-after-(\d+)$/.exec(prefix);
    const head = {
      id: `cmpl-stub${record.id}`,
      object: "text_completion",
      created: Math.floor(Date.now() / 1000),
      model: manifest.name,
    };
    response.writeHead(200, { "content-type": "text/event-stream" });
    const slowFirst = /^slow-first-(\d+)$/.exec(prefix);
    if (slowFirst) {
      response.flushHeaders();
      await new Promise((resolve) => setTimeout(resolve, Number(slowFirst[1])));
    }
    let held = "";
    const send = (value: unknown) => {
      const frame = `data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`;
      if (burst) held += frame;
      else response.write(frame);
    };
    // The client leaving aborts the loop's signal (checked before every step): steps that
    // still run after that are counted, and must stay at most one.
    const sampling = {
      temperature: body.temperature ?? 1,
      topP: body.top_p ?? 1,
      topK: Math.max(body.top_k, 0),
      minP: body.min_p ?? 0,
      ...(body.seed === undefined ? {} : { seed: body.seed }),
    };
    let generated = 0;
    let pending: number[] = [];
    const interval = Number(/^interval-(\d+)$/.exec(prefix)?.[1] ?? 1);
    try {
      for await (const step of loop.generate(
        {
          promptIds: body.prompt,
          maxTokens: body.max_tokens,
          sampling,
          stopTokenIds: body.stop_token_ids ?? [],
          minTokens: body.min_tokens ?? 0,
        },
        abort.signal,
      )) {
        record.steps += 1;
        if (record.aborted) record.stepsAfterAbort += 1;
        if (failAfter && generated >= Number(failAfter[1])) {
          send({
            error: {
              message: "CUDA error: an illegal memory access was encountered",
              type: "InternalServerError",
              code: 500,
            },
          });
          break;
        }
        // vLLM keeps the stop token id in token_ids (its text is dropped).
        pending.push(
          ...step.tokenIds,
          ...(step.stopTokenId === undefined ? [] : [step.stopTokenId]),
        );
        const finish = step.finishReason ?? null;
        // vLLM's --stream-interval N: the first token at once, then N per chunk, and the finish.
        if (finish === null && generated > 0 && pending.length < interval) continue;
        generated += pending.length;
        send({
          ...head,
          choices: [
            {
              index: 0,
              text: "",
              logprobs: null,
              finish_reason: finish,
              stop_reason: step.stopTokenId ?? null,
              token_ids: pending,
            },
          ],
          ...(record.steps === 1 ? { prompt_token_ids: body.prompt } : {}),
        });
        pending = [];
        if (finish !== null) break;
      }
      const cached = /^(?:burst-)?cached-(\d+)$/.exec(prefix);
      const usageDelay = prefix === "usage-late" ? 2000 : cached && !burst ? 50 : 0;
      if (usageDelay > 0) await new Promise((resolve) => setTimeout(resolve, usageDelay));
      if (body.stream_options?.include_usage) {
        const usage = {
          prompt_tokens: body.prompt.length,
          completion_tokens: generated,
          total_tokens: body.prompt.length + generated,
        };
        send({
          ...head,
          choices: [],
          usage: cached
            ? { ...usage, prompt_tokens_details: { cached_tokens: Number(cached[1]) } }
            : usage,
        });
      }
      send("[DONE]");
    } catch {
      // the client left: the loop stopped at its next step
    } finally {
      record.finished = true;
      response.end(held);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("stub has no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
