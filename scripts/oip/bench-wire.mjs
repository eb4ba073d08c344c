#!/usr/bin/env node
// OIP wire formats side by side in one run: the same fraud-gru batch ([7, B, 180] FP32 in,
// [B] scores out) sent to `wrangler dev` on loopback as JSON, JSON gzip-compressed, Triton
// binary tensors, and binary gzip-compressed; request bytes and round-trip latency p50/p99
// (server-side parsing and the model run included), interleaved in blocks so a shared
// machine's noise falls on all four alike, as ratios to JSON.
// Usage: node scripts/oip/bench-wire.mjs [--batch 32 --runs 200 --url http://127.0.0.1:8787]
import { gzipSync } from "node:zlib";
import { parseArgs } from "node:util";
import { timeInterleaved } from "../lib/stats.mjs";
import { startWranglerDev } from "../lib/wrangler-dev.mjs";

const { values: options } = parseArgs({
  options: {
    batch: { type: "string", default: "32" },
    runs: { type: "string", default: "200" },
    url: { type: "string" },
  },
});
const BATCH = Number(options.batch);
const RUNS = Number(options.runs);

// Seeded inputs (xorshift): 8 distinct batches, reused round-robin.
let state = 20261123;
const random = () => (
  (state ^= state << 13), (state ^= state >>> 17), (state ^= state << 5), (state >>> 0) / 2 ** 32
);
const batches = Array.from({ length: 8 }, () =>
  Float32Array.from({ length: 7 * BATCH * 180 }, random),
);

function jsonBody(values) {
  return Buffer.from(
    JSON.stringify({
      inputs: [
        {
          name: "transactions",
          shape: [7, BATCH, 180],
          datatype: "FP32",
          data: Array.from(values),
        },
      ],
    }),
  );
}
function binaryBody(values) {
  const header = JSON.stringify({
    inputs: [
      {
        name: "transactions",
        shape: [7, BATCH, 180],
        datatype: "FP32",
        parameters: { binary_data_size: values.byteLength },
      },
    ],
    outputs: [{ name: "scores", parameters: { binary_data: true } }],
  });
  return {
    body: Buffer.concat([Buffer.from(header), Buffer.from(values.buffer)]),
    headerLength: Buffer.byteLength(header),
  };
}

const formats = {
  json: batches.map((values) => ({ body: jsonBody(values), headers: {} })),
  "json+gzip": batches.map((values) => ({
    body: gzipSync(jsonBody(values)),
    headers: { "content-encoding": "gzip" },
  })),
  binary: batches.map((values) => {
    const { body, headerLength } = binaryBody(values);
    return { body, headers: { "inference-header-content-length": String(headerLength) } };
  }),
  "binary+gzip": batches.map((values) => {
    const { body, headerLength } = binaryBody(values);
    return {
      body: gzipSync(body),
      headers: {
        "inference-header-content-length": String(headerLength),
        "content-encoding": "gzip",
      },
    };
  }),
};

const server =
  options.url === undefined
    ? await startWranglerDev({
        persistTo: ".wrangler/bench-wire",
        vars: { MAX_BODY_BYTES: String(64 << 20) },
      })
    : undefined;
const url = `${options.url ?? server.url}/v2/models/fraud-gru/infer`;
try {
  const send = (name) => async (i) => {
    const { body, headers } = formats[name][i % batches.length];
    const response = await fetch(url, {
      method: "POST",
      body,
      headers: { ...headers, ...server?.headers },
    });
    if (response.status !== 200)
      throw new Error(`${name}: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  };
  const names = Object.keys(formats);
  const results = await timeInterleaved(names.map(send), {
    inputs: RUNS,
    block: 20,
    warmupMs: 2000,
  });
  const base = results[0];
  console.log(
    `fraud-gru, batch ${BATCH} ([7, ${BATCH}, 180] FP32), ` +
      `${RUNS} requests per format, loopback wrangler dev`,
  );
  console.log("format        request bytes   ×json   p50 ms   p99 ms   p50 ×json");
  names.forEach((name, k) => {
    const bytes = formats[name][0].body.byteLength;
    const { p50, p99 } = results[k];
    console.log(
      `${name.padEnd(12)} ${String(bytes).padStart(14)} ` +
        `${(bytes / formats.json[0].body.byteLength).toFixed(3).padStart(7)} ` +
        `${p50.toFixed(2).padStart(8)} ${p99.toFixed(2).padStart(8)} ` +
        `${(p50 / base.p50).toFixed(2).padStart(11)}`,
    );
  });
} finally {
  server?.stop();
}
