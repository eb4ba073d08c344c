// Open Inference Protocol v2 against the shipped edge models.
import { describe, expect, it } from "vitest";
import { get as plainGet, post as plainPost, problem } from "../../support/workers/helpers";
import { specChecked } from "../../support/workers/oip-client";

// Every answer in this file is also checked against the OIP REST specification.
const get = async (path: string, headers?: Record<string, string>) =>
  specChecked(await plainGet(path, headers), "GET", path);
const post = async (path: string, body: unknown) =>
  specChecked(await plainPost(path, body), "POST", path);

interface JsonInput {
  name: string;
  shape: number[];
  datatype: string;
  data: unknown;
}

const feeds = (ids: number[][]): { id: string; inputs: JsonInput[] } => ({
  id: "req-42",
  inputs: [
    { name: "input_ids", shape: [ids.length, ids[0]!.length], datatype: "INT64", data: ids },
    {
      name: "attention_mask",
      shape: [ids.length, ids[0]!.length],
      datatype: "INT64",
      data: ids.map((row) => row.map(() => 1)),
    },
  ],
});

describe("server endpoints", () => {
  it("GET /v2 describes the server", async () => {
    expect(await (await get("/v2", {})).json()).toMatchObject({
      name: "edge-inference",
      extensions: expect.any(Array),
    });
  });

  it("live and ready once every model is verified and loaded", async () => {
    expect((await get("/v2/health/live", {})).status).toBe(200);
    const ready = await get("/v2/health/ready", {});
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true });
  });
});

describe("model endpoints", () => {
  it("metadata lists inputs and outputs with -1 for variable dimensions", async () => {
    const response = await get("/v2/models/spam-classifier");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      name: "spam-classifier",
      platform: "onnxruntime_onnx",
      inputs: [
        { name: "input_ids", datatype: "INT64", shape: [-1, -1] },
        { name: "attention_mask", datatype: "INT64", shape: [-1, -1] },
      ],
      outputs: [{ name: "logits", datatype: "FP32", shape: [-1, 2] }],
    });
  });

  it("model ready, also by version", async () => {
    expect(await (await get("/v2/models/spam-classifier/ready")).json()).toEqual({
      name: "spam-classifier",
      ready: true,
    });
    const versions = await (await get("/v2/models/spam-classifier")).json<{ versions: string[] }>();
    expect(
      (await get(`/v2/models/spam-classifier/versions/${versions.versions[0]}/ready`)).status,
    ).toBe(200);
    expect((await get("/v2/models/spam-classifier/versions/999/ready")).status).toBe(404);
  });

  it("infer runs the model on JSON tensors and echoes the request id", async () => {
    const response = await post(
      "/v2/models/spam-classifier/infer",
      feeds([
        [5, 6, 7, 8],
        [9, 10, 11, 12],
      ]),
    );
    expect(response.status).toBe(200);
    const body = await response.json<{
      id: string;
      model_name: string;
      outputs: { name: string; shape: number[]; datatype: string; data: number[] }[];
    }>();
    expect(body.id).toBe("req-42");
    expect(body.model_name).toBe("spam-classifier");
    expect(body.outputs).toHaveLength(1);
    expect(body.outputs[0]).toMatchObject({ name: "logits", datatype: "FP32", shape: [2, 2] });
    expect(body.outputs[0]!.data).toHaveLength(4);
  });

  it("accepts flat row-major data as well as nested", async () => {
    const nested = await (await post("/v2/models/spam-classifier/infer", feeds([[5, 6, 7]]))).json<{
      outputs: { data: number[] }[];
    }>();
    const flat = feeds([[5, 6, 7]]);
    flat.inputs[0]!.data = [5, 6, 7];
    const flatBody = await (await post("/v2/models/spam-classifier/infer", flat)).json<{
      outputs: { data: number[] }[];
    }>();
    expect(flatBody.outputs[0]!.data).toEqual(nested.outputs[0]!.data);
  });
});

describe("infer errors", () => {
  it("422 for a wrong shape, naming the input", async () => {
    const request = feeds([[5, 6, 7]]);
    request.inputs[1]!.shape = [1, 3, 1];
    request.inputs[1]!.data = [[[1], [1], [1]]];
    const response = await post("/v2/models/spam-classifier/infer", request);
    expect(response.status).toBe(422);
    const body = await problem(response);
    expect(body).toMatchObject({
      code: "unprocessable_input",
      field: "inputs.attention_mask.shape",
    });
    expect(body.error).toBe(body.detail);
  });

  it("422 for a wrong datatype, a missing input, an unknown input or output", async () => {
    const wrongType = feeds([[5, 6]]);
    wrongType.inputs[0]!.datatype = "INT32";
    expect((await problem(await post("/v2/models/spam-classifier/infer", wrongType))).field).toBe(
      "inputs.input_ids.datatype",
    );

    const missing = feeds([[5, 6]]);
    missing.inputs.pop();
    expect((await problem(await post("/v2/models/spam-classifier/infer", missing))).field).toBe(
      "inputs.attention_mask",
    );

    const unknown = feeds([[5, 6]]);
    unknown.inputs.push({
      name: "token_type_ids",
      shape: [1, 2],
      datatype: "INT64",
      data: [[0, 0]],
    });
    expect((await problem(await post("/v2/models/spam-classifier/infer", unknown))).field).toBe(
      "inputs.token_type_ids",
    );

    const output = { ...feeds([[5, 6]]), outputs: [{ name: "probabilities" }] };
    const response = await post("/v2/models/spam-classifier/infer", output);
    expect(response.status).toBe(422);
    expect((await problem(response)).field).toBe("outputs.probabilities");
  });

  it(
    "422 when data does not fill the shape; " + "400 for a value the datatype cannot hold",
    async () => {
      const short = feeds([[5, 6, 7]]);
      short.inputs[0]!.shape = [1, 4];
      const response = await post("/v2/models/spam-classifier/infer", short);
      expect(response.status).toBe(422);
      expect((await problem(response)).field).toBe("inputs.0.data");

      const bad = feeds([[5, 6, 7]]);
      bad.inputs[0]!.data = [[5, 6.5, 7]];
      const badResponse = await post("/v2/models/spam-classifier/infer", bad);
      expect(badResponse.status).toBe(400);
      expect((await problem(badResponse)).field).toBe("inputs.0.data.1");
    },
  );

  it("400 for a malformed request and 404 for an unknown model", async () => {
    const malformed = await post("/v2/models/spam-classifier/infer", {
      inputs: [{ name: "input_ids", shape: [1], datatype: "INT63", data: [1] }],
    });
    expect(malformed.status).toBe(400);
    expect((await problem(malformed)).field).toBe("inputs.0.datatype");
    const unknown = await post("/v2/models/nope/infer", feeds([[1]]));
    expect(unknown.status).toBe(404);
    expect((await problem(unknown)).field).toBe("name");
  });

  it(
    "422, not 500, when the model refuses valid-shaped " +
      "data (a token id beyond the vocabulary)",
    async () => {
      // 8,000 is the first id past the vocabulary, inside the graph's n-gram rows: still refused.
      for (const id of [8_000, 999_999]) {
        const response = await post("/v2/models/spam-classifier/infer", feeds([[5, id, 7]]));
        expect(response.status).toBe(422);
        expect(await problem(response)).toMatchObject({
          code: "unprocessable_input",
          field: "inputs",
        });
      }
    },
  );

  it("an empty batch is answered, never a 500", async () => {
    const request = feeds([[5]]);
    for (const input of request.inputs) {
      input.shape = [0, 1];
      input.data = [];
    }
    const response = await post("/v2/models/spam-classifier/infer", request);
    expect([200, 422]).toContain(response.status);
  });

  it("413 for more tensor elements than one request may carry", async () => {
    const response = await post("/v2/models/spam-classifier/infer", {
      inputs: [{ name: "input_ids", shape: [2000, 1000], datatype: "INT64", data: [] }],
    });
    expect(response.status).toBe(413);
  });
});
