// What Triton's and KServe's clients see: every /v2 answer checked against the Open
// Inference Protocol REST specification, responses decoded as tritonclient.http decodes
// them, and the requests it sent replayed byte for byte.
import { SELF } from "cloudflare:test";
import Ajv, { type ValidateFunction } from "ajv";
import { expect } from "vitest";
import { z } from "zod";
import spec from "../../fixtures/oip/open_inference_rest.json";
import { BASE, KEY } from "./helpers";

// kserve/open-inference-protocol specification/protocol/open_inference_rest.yaml (as JSON).
const ajv = new Ajv({ strict: false, allErrors: true });
const { components } = z
  .object({ components: z.object({ schemas: z.record(z.string(), z.unknown()) }) })
  .loose()
  .parse(spec);
ajv.addSchema({ components }, "oip");
const schema = (name: string): ValidateFunction =>
  ajv.getSchema(`oip#/components/schemas/${name}`) ?? expect.fail(`no schema ${name}`);

/**
 * Triton's binary extension sends an output's bytes after the JSON header and leaves `data`
 * out of it (parameters.binary_data_size instead); the OIP schema requires `data`, so a
 * binary output is checked against the spec's response_output with only that requirement
 * swapped for binary_data_size.
 */
const ResponseOutput = z
  .object({ properties: z.record(z.string(), z.unknown()), required: z.array(z.string()) })
  .loose()
  .parse(components.schemas.response_output);
const binaryOutput = ajv.compile({
  ...JSON.parse(JSON.stringify(ResponseOutput).replaceAll('"#/components/', '"oip#/components/')),
  required: [...ResponseOutput.required.filter((name) => name !== "data"), "parameters"],
  not: { required: ["data"] },
  allOf: [
    {
      properties: {
        parameters: {
          required: ["binary_data_size"],
          properties: { binary_data_size: { type: "integer", minimum: 0 } },
        },
      },
    },
  ],
});

function check(validate: ValidateFunction, value: unknown, what: string): void {
  if (!validate(value))
    expect.fail(
      `${what} does not match the OIP specification: ` +
        `${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`,
    );
}

/** Which schema of the specification a /v2 answer must match (undefined: the spec gives none). */
function schemaFor(method: string, path: string, status: number): ValidateFunction | undefined {
  if (status !== 200) return schema("inference_error_response"); // every error: {"error": string}
  if (method === "GET" && /^\/v2\/?$/.test(path)) return schema("metadata_server_response");
  if (method === "GET" && /^\/v2\/models\/[^/]+(\/versions\/[^/]+)?$/.test(path))
    return schema("metadata_model_response");
  if (method === "POST" && /\/infer$/.test(path)) return schema("inference_response");
  return undefined;
}

export interface Decoded {
  status: number;
  header: Record<string, unknown> & {
    outputs?: {
      name: string;
      datatype: string;
      shape: number[];
      data?: unknown[];
      parameters?: { binary_data_size?: number };
    }[];
  };
  /** The output's elements as tritonclient's as_numpy gives them (flat). */
  output(name: string): unknown[];
}

const utf8 = new TextDecoder();

function decodeBinary(bytes: Uint8Array, datatype: string): (number | bigint | string | boolean)[] {
  const buffer = bytes.slice().buffer;
  switch (datatype) {
    case "FP32":
      return Array.from(new Float32Array(buffer));
    case "FP64":
      return Array.from(new Float64Array(buffer));
    case "INT64":
      return Array.from(new BigInt64Array(buffer));
    case "INT32":
      return Array.from(new Int32Array(buffer));
    case "BOOL":
      return Array.from(new Uint8Array(buffer), (byte) => byte === 1);
    case "BYTES": {
      // tritonclient/utils deserialize_bytes_tensor: 4-byte little-endian length, then the bytes.
      const view = new DataView(buffer);
      const out: string[] = [];
      for (let offset = 0; offset < bytes.byteLength; ) {
        const length = view.getUint32(offset, true);
        out.push(utf8.decode(bytes.subarray(offset + 4, offset + 4 + length)));
        offset += 4 + length;
      }
      return out;
    }
    default:
      return expect.fail(`no decoder for ${datatype} in this test`);
  }
}

/**
 * Decodes a response the way tritonclient.http does (http/_utils.py _get_error for any
 * status but 200: the JSON body's `error`; http/_infer_result.py InferResult: the JSON
 * header of Inference-Header-Content-Length bytes, then each output with
 * parameters.binary_data_size takes its bytes from the buffer in order), after checking it
 * against the OIP specification.
 */
export async function decodeLikeTritonClient(
  response: Response,
  method: string,
  path: string,
): Promise<Decoded> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  const length = response.headers.get("inference-header-content-length");
  const headerLength = length === null ? bytes.byteLength : Number(length);
  const header: Decoded["header"] = JSON.parse(utf8.decode(bytes.subarray(0, headerLength)));
  if (response.status !== 200) {
    expect(typeof header.error, `error member of ${response.status} ${method} ${path}`).toBe(
      "string",
    );
  }
  const validate = schemaFor(method, path, response.status);
  const binary = (header.outputs ?? []).some(
    (output) => output.parameters?.binary_data_size !== undefined,
  );
  if (validate !== undefined && !binary)
    check(validate, header, `${response.status} ${method} ${path}`);
  if (binary) {
    // The header minus its binary outputs is an inference_response; each binary output is checked
    // alone.
    const outputs = header.outputs ?? [];
    check(
      schema("inference_response"),
      {
        ...header,
        outputs: outputs.filter((output) => output.parameters?.binary_data_size === undefined),
      },
      `${method} ${path} header`,
    );
    for (const output of outputs)
      if (output.parameters?.binary_data_size !== undefined)
        check(binaryOutput, output, `binary output ${output.name}`);
  }
  const buffer = bytes.subarray(headerLength);
  const offsets = new Map<string, number>();
  let index = 0;
  for (const output of header.outputs ?? []) {
    const size = output.parameters?.binary_data_size;
    if (size !== undefined) {
      offsets.set(output.name, index);
      index += size;
    }
  }
  if (length !== null)
    expect(index, "binary outputs fill the body after the header").toBe(buffer.byteLength);
  return {
    status: response.status,
    header,
    output(name) {
      const output =
        (header.outputs ?? []).find((candidate) => candidate.name === name) ??
        expect.fail(`no output ${name}`);
      const size = output.parameters?.binary_data_size;
      if (size === undefined) return (output.data ?? []).flat(8);
      const start = offsets.get(name) ?? 0;
      return decodeBinary(buffer.subarray(start, start + size), output.datatype);
    },
  };
}

/** A /v2 request (authorized unless told otherwise), its answer decoded and spec-checked. */
export async function oip(
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: BodyInit } = {},
): Promise<Decoded> {
  const response = await SELF.fetch(`${BASE}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...init.headers },
    body: init.body ?? null,
  });
  return decodeLikeTritonClient(response, method, path);
}

const CapturedRequest = z.object({
  method: z.string(),
  path: z.string(),
  headers: z.array(z.tuple([z.string(), z.string()])),
  body_base64: z.string(),
});
export type CapturedRequest = z.infer<typeof CapturedRequest>;

export function captured(fixture: unknown): CapturedRequest {
  return CapturedRequest.parse(fixture);
}

export function bodyOf(request: CapturedRequest): Uint8Array {
  return Uint8Array.from(atob(request.body_base64), (char) => char.charCodeAt(0));
}

/** Sends a captured request as the client sent it (its own host and length aside). */
export function replay(
  request: CapturedRequest,
  override: { path?: string; body?: Uint8Array; headers?: Record<string, string> } = {},
): Promise<Decoded> {
  const headers = Object.fromEntries(
    request.headers.filter(([name]) => name !== "host" && name !== "content-length"),
  );
  const body = override.body ?? bodyOf(request);
  return oip(request.method, override.path ?? request.path, {
    headers: { ...headers, ...override.headers },
    ...(request.method === "GET" ? {} : { body }),
  });
}

/** Checks a /v2 answer against the specification without consuming it. */
export async function specChecked(
  response: Response,
  method: string,
  path: string,
): Promise<Response> {
  await decodeLikeTritonClient(response.clone(), method, path);
  return response;
}
