// The OIP inference codec, shared by the edge and the reference origin: a Request becomes
// validated tensors (JSON or Triton binary data), and tensors become the response — JSON,
// or a JSON header plus binary data when the client asked for it. Pure over Request/bytes.
import { z } from "zod";
import { ServiceError } from "../errors/service-error";
import { invalidRequest } from "../errors/invalid-request";
import { DataTypeSchema, elementCount, type Tensor } from "../tensors/tensor";
import { decodeBinaryTensor, encodeBinaryTensor } from "./oip-binary";
import { readOipBody } from "./oip-body";
import { fromJsonTensor, toJsonTensor } from "./oip-tensors";

const _Parameters = z.record(z.string(), z.unknown());

export const InferInputSchema = z.object({
  name: z.string().min(1),
  shape: z.array(z.number().int().min(0)).max(8),
  datatype: DataTypeSchema,
  parameters: z
    .object({ binary_data_size: z.number().int().min(0).optional() })
    .catchall(z.unknown())
    .optional(),
  data: z.unknown().optional(),
});

export const InferOutputSchema = z.object({
  name: z.string().min(1),
  parameters: z.object({ binary_data: z.boolean().optional() }).catchall(z.unknown()).optional(),
});

export const InferRequestSchema = z.object({
  id: z.string().max(256).optional(),
  parameters: z
    .object({ binary_data_output: z.boolean().optional() })
    .catchall(z.unknown())
    .optional(),
  inputs: z.array(InferInputSchema).min(1).max(32),
  outputs: z.array(InferOutputSchema).max(32).optional(),
});

export interface InferCall {
  id: string | undefined;
  /** The decoded inputs by name, in request order. */
  inputs: Record<string, Tensor>;
  /** Requested output names; undefined means every output. */
  outputs: string[] | undefined;
  /**
   * Whether an output goes back as binary data (its own `binary_data`, else `binary_data_output`).
   */
  binaryOutput(name: string): boolean;
}

export interface InferCodecOptions {
  maxBytes: number;
  /** Most tensor elements all inputs together may hold (413 above). */
  maxElements: number;
}

function invalid(field: string, detail: string): ServiceError {
  return new ServiceError(400, "invalid_request", `${field}: ${detail}`, { field });
}

/** Triton features this server does not offer are refused by name, not ignored. */
const UNSUPPORTED = [
  "shared_memory_region",
  "shared_memory_byte_size",
  "shared_memory_offset",
  "classification",
];

function refuseUnsupported(parameters: Record<string, unknown> | undefined, field: string): void {
  const name = UNSUPPORTED.find((key) => parameters?.[key] !== undefined);
  if (name !== undefined)
    throw invalid(`${field}.parameters.${name}`, `"${name}" is not supported by this server`);
}

/** Parses an inference request body (JSON, compressed, or with binary tensors) into tensors. */
export async function parseInferRequest(
  request: Request,
  options: InferCodecOptions,
): Promise<InferCall> {
  const body = await readOipBody(request, { maxBytes: options.maxBytes });
  const parsed = InferRequestSchema.safeParse(body.json ?? {});
  if (!parsed.success) throw invalidRequest(parsed.error, "body");
  const call = parsed.data;

  const elements = call.inputs.reduce((sum, input) => sum + elementCount(input.shape), 0);
  if (elements > options.maxElements) {
    throw new ServiceError(
      413,
      "payload_too_large",
      `At most ${options.maxElements} tensor elements per request, got ${elements}`,
      { field: "inputs" },
    );
  }

  const inputs: Record<string, Tensor> = {};
  let offset = 0;
  call.inputs.forEach((input, i) => {
    const field = `inputs.${i}`;
    refuseUnsupported(input.parameters, field);
    if (Object.hasOwn(inputs, input.name))
      throw invalid("inputs", `input "${input.name}" appears more than once`);
    const size = input.parameters?.binary_data_size;
    if (size === undefined) {
      if (input.data === undefined)
        throw invalid(
          `${field}.data`,
          "required (or send the tensor as binary data with parameters.binary_data_size)",
        );
      inputs[input.name] = fromJsonTensor({ ...input, data: input.data }, field);
      return;
    }
    if (input.data !== undefined)
      throw invalid(`${field}.data`, "give either data or parameters.binary_data_size, not both");
    if (offset + size > body.binary.byteLength) {
      throw invalid(
        `${field}.parameters.binary_data_size`,
        `${size} bytes at offset ${offset} run past the ` +
          `${body.binary.byteLength} bytes of binary data`,
      );
    }
    const data = decodeBinaryTensor(
      body.binary.subarray(offset, offset + size),
      input.datatype,
      input.shape,
      `${field}.parameters.binary_data_size`,
    );
    inputs[input.name] = { datatype: input.datatype, shape: input.shape, data };
    offset += size;
  });
  if (offset !== body.binary.byteLength) {
    throw invalid(
      "headers.inference-header-content-length",
      `${body.binary.byteLength - offset} bytes of binary ` +
        "data after the JSON header belong to no input",
    );
  }

  call.outputs?.forEach((output, i) => refuseUnsupported(output.parameters, `outputs.${i}`));
  const binaryDefault = call.parameters?.binary_data_output === true;
  const perOutput = new Map(
    call.outputs?.map((output) => [output.name, output.parameters?.binary_data]),
  );
  return {
    id: call.id,
    inputs,
    outputs: call.outputs?.map((output) => output.name),
    binaryOutput: (name) => perOutput.get(name) ?? binaryDefault,
  };
}

export interface InferResult {
  model_name: string;
  model_version?: string;
  id?: string;
  outputs: Record<string, Tensor>;
}

const encoder = new TextEncoder();

/**
 * The inference response: plain JSON, or — when any output is asked for as binary data —
 * the JSON header, then each binary output's bytes in order, with the header's byte length
 * in `Inference-Header-Content-Length`.
 */
export function encodeInferResponse(
  result: InferResult,
  call: Pick<InferCall, "binaryOutput">,
  headers: Record<string, string> = {},
): Response {
  const binary: Uint8Array[] = [];
  const outputs = Object.entries(result.outputs).map(([name, tensor]) => {
    if (!call.binaryOutput(name)) return toJsonTensor(name, tensor);
    const bytes = encodeBinaryTensor(tensor);
    binary.push(bytes);
    return {
      name,
      datatype: tensor.datatype,
      shape: tensor.shape,
      parameters: { binary_data_size: bytes.byteLength },
    };
  });
  const header = encoder.encode(JSON.stringify({ ...result, outputs }));
  if (binary.length === 0)
    return new Response(header, {
      status: 200,
      headers: { ...headers, "content-type": "application/json" },
    });
  const body = new Uint8Array(
    header.byteLength + binary.reduce((sum, part) => sum + part.byteLength, 0),
  );
  body.set(header, 0);
  let offset = header.byteLength;
  for (const part of binary) {
    body.set(part, offset);
    offset += part.byteLength;
  }
  return new Response(body, {
    status: 200,
    headers: {
      ...headers,
      "content-type": "application/octet-stream",
      "inference-header-content-length": String(header.byteLength),
    },
  });
}
