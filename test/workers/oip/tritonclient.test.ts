// Triton's and KServe's clients against the edge: the requests tritonclient.http really
// sends (no Content-Type, binary tensors, gzip/deflate), decoded as it decodes answers,
// every /v2 answer checked against the OIP REST specification.
import { describe, expect, it } from "vitest";
import bytesFp16 from "../../fixtures/tritonclient/bytes-fp16.request.json";
import fraudBinary from "../../fixtures/tritonclient/fraud-binary.request.json";
import modelConfig from "../../fixtures/tritonclient/model-config.request.json";
import repositoryIndex from "../../fixtures/tritonclient/repository-index.request.json";
import serverMetadata from "../../fixtures/tritonclient/server-metadata.request.json";
import spamBinaryDeflate from "../../fixtures/tritonclient/spam-binary-deflate.request.json";
import spamBinaryGzip from "../../fixtures/tritonclient/spam-binary-gzip.request.json";
import spamBinary from "../../fixtures/tritonclient/spam-binary.request.json";
import spamJson from "../../fixtures/tritonclient/spam-json.request.json";
import { bodyOf, captured, oip, replay } from "../../support/workers/oip-client";

const encoder = new TextEncoder();
const SPAM_IDS = [
  [5, 6, 7, 8],
  [9, 10, 11, 12],
];

/** The same spam request as plain JSON, for comparing what binary requests return. */
async function jsonLogits(): Promise<unknown[]> {
  const body = JSON.stringify({
    inputs: [
      { name: "input_ids", shape: [2, 4], datatype: "INT64", data: SPAM_IDS },
      {
        name: "attention_mask",
        shape: [2, 4],
        datatype: "INT64",
        data: SPAM_IDS.map((row) => row.map(() => 1)),
      },
    ],
  });
  const answer = await oip("POST", "/v2/models/spam-classifier/infer", { body });
  expect(answer.status).toBe(200);
  return answer.output("logits");
}

/** A binary request built as tritonclient builds one: JSON header, then raw tensors. */
function binaryBody(
  header: unknown,
  ...tensors: Uint8Array[]
): { body: Uint8Array; headers: Record<string, string> } {
  const json = encoder.encode(JSON.stringify(header));
  const body = new Uint8Array(
    json.byteLength + tensors.reduce((sum, tensor) => sum + tensor.byteLength, 0),
  );
  body.set(json);
  let offset = json.byteLength;
  for (const tensor of tensors) {
    body.set(tensor, offset);
    offset += tensor.byteLength;
  }
  return { body, headers: { "inference-header-content-length": String(json.byteLength) } };
}

const int64 = (values: number[]) => new Uint8Array(BigInt64Array.from(values, BigInt).buffer);
const spamHeader = (size = 32) => ({
  inputs: [
    { name: "input_ids", shape: [1, 4], datatype: "INT64", parameters: { binary_data_size: size } },
    {
      name: "attention_mask",
      shape: [1, 4],
      datatype: "INT64",
      parameters: { binary_data_size: 32 },
    },
  ],
});

async function gzip(bytes: Uint8Array, format: "gzip" | "deflate" = "gzip"): Promise<Uint8Array> {
  return new Uint8Array(
    await new Response(
      new Blob([bytes]).stream().pipeThrough(new CompressionStream(format)),
    ).arrayBuffer(),
  );
}

describe("tritonclient.http requests, replayed byte for byte", () => {
  it("binary tensors without a Content-Type: binary logits equal to the JSON route's", async () => {
    const request = captured(spamBinary);
    expect(request.headers.some(([name]) => name === "content-type")).toBe(false);
    const answer = await replay(request);
    expect(answer.status).toBe(200);
    expect(answer.header.outputs).toEqual([
      { name: "logits", datatype: "FP32", shape: [2, 2], parameters: { binary_data_size: 16 } },
    ]);
    expect(answer.output("logits")).toEqual(await jsonLogits());
  });

  it("gzip and deflate request bodies inflate to the same answer", async () => {
    const expected = await jsonLogits();
    for (const fixture of [spamBinaryGzip, spamBinaryDeflate]) {
      const request = captured(fixture);
      expect(request.headers.find(([name]) => name === "content-encoding")?.[1]).toMatch(
        /^(gzip|deflate)$/,
      );
      const answer = await replay(request);
      expect(answer.status).toBe(200);
      expect(answer.output("logits")).toEqual(expected);
    }
  });

  it("JSON tensors with a JSON output requested: plain JSON back, id echoed", async () => {
    const answer = await replay(captured(spamJson));
    expect(answer.status).toBe(200);
    expect(answer.header).toMatchObject({
      id: "r1",
      model_name: "spam-classifier",
      outputs: [{ name: "logits", datatype: "FP32", shape: [2, 2] }],
    });
    expect(answer.output("logits")).toEqual(await jsonLogits());
  });

  it(
    "FP32 binary input at a model version, binary " + "output: scores equal to the JSON route's",
    async () => {
      const request = captured(fraudBinary);
      const answer = await replay(request);
      expect(answer.status).toBe(200);
      expect(answer.header).toMatchObject({
        model_name: "fraud-gru",
        outputs: [{ name: "scores", datatype: "FP32", shape: [2] }],
      });
      const body = bodyOf(request);
      const headerLength = Number(
        request.headers.find(([name]) => name === "inference-header-content-length")?.[1],
      );
      const values = Array.from(new Float32Array(body.slice(headerLength).buffer));
      const json = await oip("POST", request.path, {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          inputs: [{ name: "transactions", shape: [7, 2, 180], datatype: "FP32", data: values }],
        }),
      });
      expect(json.status).toBe(200);
      expect(answer.output("scores")).toEqual(json.output("scores"));
    },
  );

  it(
    "BYTES and FP16 tensors decode; the model then " +
      "refuses the datatype by name (422 with error)",
    async () => {
      const answer = await replay(captured(bytesFp16));
      expect(answer.status).toBe(422);
      expect(answer.header).toMatchObject({
        code: "unprocessable_input",
        field: "inputs.input_ids.datatype",
      });
    },
  );

  it("server metadata, model config and the repository index", async () => {
    const metadata = await replay(captured(serverMetadata));
    expect(metadata.header.extensions).toEqual(
      expect.arrayContaining(["binary_tensor_data", "model_configuration", "model_repository"]),
    );

    const config = await replay(captured(modelConfig));
    expect(config.status).toBe(200);
    expect(config.header).toMatchObject({
      name: "spam-classifier",
      platform: "onnxruntime_onnx",
      max_batch_size: 0,
      input: [
        { name: "input_ids", data_type: "TYPE_INT64", dims: [-1, -1] },
        { name: "attention_mask", data_type: "TYPE_INT64", dims: [-1, -1] },
      ],
      output: [{ name: "logits", data_type: "TYPE_FP32", dims: [-1, 2] }],
    });

    const index = await replay(captured(repositoryIndex));
    expect(index.status).toBe(200);
    const models = await oip("POST", "/v2/repository/index", { body: "" });
    expect(models.header).toEqual(index.header);
    expect(index.header).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: "spam-classifier",
          state: expect.stringMatching(/^(READY|LOADING|UNAVAILABLE)$/),
        }),
      ]),
    );
    await oip("GET", "/v2/models/spam-classifier/ready");
    const ready = await oip("POST", "/v2/repository/index", { body: '{"ready": true}' });
    expect(ready.header).toEqual(
      expect.arrayContaining([
        { name: "spam-classifier", version: expect.any(String), state: "READY" },
      ]),
    );
  });
});

describe("binary tensor extension both ways", () => {
  it("binary_data per output overrides binary_data_output", async () => {
    const request = binaryBody(
      {
        ...spamHeader(),
        parameters: { binary_data_output: true },
        outputs: [{ name: "logits", parameters: { binary_data: false } }],
      },
      int64([5, 6, 7, 8]),
      int64([1, 1, 1, 1]),
    );
    const answer = await oip("POST", "/v2/models/spam-classifier/infer", request);
    expect(answer.status).toBe(200);
    expect(answer.header.outputs?.[0]?.data).toHaveLength(2);

    const binary = await oip(
      "POST",
      "/v2/models/spam-classifier/infer",
      binaryBody(
        { ...spamHeader(), outputs: [{ name: "logits", parameters: { binary_data: true } }] },
        int64([5, 6, 7, 8]),
        int64([1, 1, 1, 1]),
      ),
    );
    expect(binary.header.outputs?.[0]?.parameters?.binary_data_size).toBe(8);
    expect(binary.output("logits")).toEqual(answer.output("logits"));
  });

  it(
    "400 naming binary_data_size when the bytes " + "do not fit the shape, or run past the body",
    async () => {
      const short = await oip(
        "POST",
        "/v2/models/spam-classifier/infer",
        binaryBody(spamHeader(24), int64([5, 6, 7]), int64([1, 1, 1, 1])),
      );
      expect(short.status).toBe(400);
      expect(short.header.field).toBe("inputs.0.parameters.binary_data_size");

      const past = await oip(
        "POST",
        "/v2/models/spam-classifier/infer",
        binaryBody(spamHeader(), int64([5, 6, 7, 8])),
      );
      expect(past.status).toBe(400);
      expect(past.header.field).toBe("inputs.1.parameters.binary_data_size");
    },
  );

  it(
    "400 for bytes no input claims, a header " + "length past the body, and data given twice",
    async () => {
      const extra = await oip(
        "POST",
        "/v2/models/spam-classifier/infer",
        binaryBody(spamHeader(), int64([5, 6, 7, 8]), int64([1, 1, 1, 1]), int64([9])),
      );
      expect(extra.status).toBe(400);
      expect(extra.header.field).toBe("headers.inference-header-content-length");

      const request = binaryBody(spamHeader(), int64([5, 6, 7, 8]), int64([1, 1, 1, 1]));
      const beyond = await oip("POST", "/v2/models/spam-classifier/infer", {
        body: request.body,
        headers: { "inference-header-content-length": "100000" },
      });
      expect(beyond.status).toBe(400);
      expect(beyond.header.field).toBe("headers.inference-header-content-length");

      const header = spamHeader();
      const both = binaryBody(
        { inputs: [{ ...header.inputs[0], data: [5, 6, 7, 8] }, header.inputs[1]] },
        int64([5, 6, 7, 8]),
        int64([1, 1, 1, 1]),
      );
      const twice = await oip("POST", "/v2/models/spam-classifier/infer", both);
      expect(twice.status).toBe(400);
      expect(twice.header.field).toBe("inputs.0.data");
    },
  );

  it("400 for BYTES data whose length prefixes do not add up", async () => {
    const bytes = new Uint8Array([5, 0, 0, 0, 104, 105]); // claims 5 bytes, holds 2
    const answer = await oip(
      "POST",
      "/v2/models/spam-classifier/infer",
      binaryBody(
        {
          inputs: [
            {
              name: "input_ids",
              shape: [1],
              datatype: "BYTES",
              parameters: { binary_data_size: 6 },
            },
          ],
        },
        bytes,
      ),
    );
    expect(answer.status).toBe(400);
    expect(answer.header.field).toBe("inputs.0.parameters.binary_data_size");
  });

  it("400 for shared memory and classification, which this server does not offer", async () => {
    const answer = await oip("POST", "/v2/models/spam-classifier/infer", {
      body: JSON.stringify({
        ...spamHeader(),
        outputs: [{ name: "logits", parameters: { classification: 1 } }],
      }).replace(/"parameters":\{"binary_data_size":32\}/g, '"data":[1,1,1,1]'),
    });
    expect(answer.status).toBe(400);
    expect(answer.header.field).toBe("outputs.0.parameters.classification");
  });
});

describe("bodies as clients send them", () => {
  const plain = JSON.stringify({
    inputs: [
      { name: "input_ids", shape: [1, 2], datatype: "INT64", data: [5, 6] },
      { name: "attention_mask", shape: [1, 2], datatype: "INT64", data: [1, 1] },
    ],
  });

  it(
    "JSON whatever the Content-Type says, as Triton reads " +
      "it (none, JSON, octet-stream, curl's form type)",
    async () => {
      const types = [
        "",
        "application/json",
        "application/octet-stream",
        "application/x-www-form-urlencoded",
        "text/plain;charset=UTF-8",
      ];
      for (const type of types) {
        const body = encoder.encode(plain); // bytes: fetch adds no Content-Type of its own
        const answer = await oip("POST", "/v2/models/spam-classifier/infer", {
          body,
          headers: type === "" ? {} : { "content-type": type },
        });
        expect(answer.status, type).toBe(200);
      }
    },
  );

  it("415 naming the header for an encoding other than gzip, deflate or identity", async () => {
    const brotli = await oip("POST", "/v2/models/spam-classifier/infer", {
      body: plain,
      headers: { "content-encoding": "br" },
    });
    expect(brotli.status).toBe(415);
    expect(brotli.header.field).toBe("headers.content-encoding");
  });

  it("400 for a body that is not what its Content-Encoding says", async () => {
    const answer = await oip("POST", "/v2/models/spam-classifier/infer", {
      body: plain,
      headers: { "content-encoding": "gzip" },
    });
    expect(answer.status).toBe(400);
    expect(answer.header.field).toBe("body");
  });

  it("413 when a small gzip body inflates past MAX_BODY_BYTES (1 MiB)", async () => {
    const bomb = encoder.encode(
      '{"inputs":[{"name":"input_ids","shape":[1],"datatype":"INT64","data":[1]}],"id":"' +
        `${"a".repeat(2_000_000)}"}`,
    );
    const compressed = await gzip(bomb);
    expect(compressed.byteLength).toBeLessThan(10_000);
    const answer = await oip("POST", "/v2/models/spam-classifier/infer", {
      body: compressed,
      headers: { "content-encoding": "gzip" },
    });
    expect(answer.status).toBe(413);
    expect(answer.header.code).toBe("payload_too_large");
  });

  it("413 for a raw body over MAX_BODY_BYTES", async () => {
    const answer = await oip("POST", "/v2/models/spam-classifier/infer", {
      body: `{"id":"${"a".repeat(1_100_000)}"}`,
    });
    expect(answer.status).toBe(413);
  });

  it("400 for malformed JSON, naming the body", async () => {
    const answer = await oip("POST", "/v2/models/spam-classifier/infer", { body: '{"inputs": [' });
    expect(answer.status).toBe(400);
    expect(answer.header.field).toBe("body");
  });
});

describe("deeply nested data (found by fuzzing)", () => {
  it("a 20 KB [[[[…]]]] in data is a 400 naming inputs.0.data, not a stack overflow", async () => {
    const depth = 10_000;
    const body =
      '{"inputs":[{"name":"input_ids","shape":[1,1],"datatype":"INT64","data":' +
      `${"[".repeat(depth)}1${"]".repeat(depth)}}]}`;
    expect(body.length).toBeGreaterThan(20_000);
    const answer = await oip("POST", "/v2/models/spam-classifier/infer", {
      body,
      headers: { "content-type": "application/json" },
    });
    expect(answer.status).toBe(400);
    expect(answer.header).toMatchObject({ code: "invalid_request", field: "inputs.0.data" });
  });

  it(
    "data nested deeper than its rank (but within " + "the parser's bound) is a 400 naming it",
    async () => {
      const body =
        '{"inputs":[{"name":"attention_mask","shape":[1,1],' +
        '"datatype":"INT64","data":[1]},{"name":"input_ids","shape":[1,1],' +
        `"datatype":"INT64","data":${"[".repeat(12)}1${"]".repeat(12)}}]}`;
      const answer = await oip("POST", "/v2/models/spam-classifier/infer", { body });
      expect(answer.status).toBe(400);
      expect(answer.header.field).toBe("inputs.1.data");
    },
  );

  it("deep nesting elsewhere (parameters) is refused by name too", async () => {
    const body = `{"parameters":{"x":${"[".repeat(5000)}${"]".repeat(5000)}},"inputs":[]}`;
    const answer = await oip("POST", "/v2/models/spam-classifier/infer", { body });
    expect(answer.status).toBe(400);
    expect(answer.header.field).toBe("parameters.x");
  });
});

describe("every /v2 error speaks OIP", () => {
  it("unknown routes, models and versions carry error", async () => {
    for (const [method, path] of [
      ["GET", "/v2/nope"],
      ["GET", "/v2/models/nope"],
      ["GET", "/v2/models/nope/config"],
      ["GET", "/v2/models/spam-classifier/versions/999/config"],
      ["POST", "/v2/repository/models/spam-classifier/load"],
      ["GET", "/v2/models/spam-classifier/stats"],
    ] as const) {
      const answer = await oip(method, path, method === "POST" ? { body: "" } : {});
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.header.error).toEqual(expect.any(String));
    }
  });

  it("401 carries error, as tritonclient needs to report it", async () => {
    const answer = await oip("GET", "/v2/models/spam-classifier", {
      headers: { authorization: "Bearer wrong" },
    });
    expect(answer.status).toBe(401);
  });

  it("GET /v2/ answers like GET /v2", async () => {
    const slash = await oip("GET", "/v2/");
    expect(slash.status).toBe(200);
    expect(slash.header).toEqual((await oip("GET", "/v2")).header);
  });

  it("the server and model endpoints match the specification", async () => {
    for (const path of [
      "/v2/health/live",
      "/v2/health/ready",
      "/v2/models/spam-classifier",
      "/v2/models/fraud-gru/ready",
      "/v2/models/fraud-gru/config",
    ]) {
      expect((await oip("GET", path)).status, path).toBe(200);
    }
  });
});
