// createOrtRuntime (src/runtime/ort-runtime.ts) hands out onnxruntime's output arrays as they
// are, without copying them again: the in-isolate decode loop feeds each step's presents to the
// next step, so a result must outlive the session's next run. That holds only while both
// onnxruntime packages copy each output out of ORT's memory into a fresh array of its own
// (onnxruntime-web: js/web/lib/wasm/wasm-core-impl.ts `run`; onnxruntime-node:
// js/node/src/inference_session_wrap.cc). This pins it for the pinned releases, on the tiny
// LLM's decoder graph, whose presents are the outputs the loop re-feeds.
import { readFileSync } from "node:fs";
import * as ortNode from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web";
import { beforeAll, describe, expect, it } from "vitest";
import { TextGenerationSchema } from "../../../../src/models/manifest";
import { createOrtRuntime, type OrtEngine } from "../../../../src/runtime/ort-runtime";
import type { Tensor } from "../../../../src/tensors/tensor";

const DIR = "models/tiny-llm";
const manifest = TextGenerationSchema.parse(
  JSON.parse(readFileSync(`${DIR}/manifest.json`, "utf8")),
);
const { layers, kvHeads, headDim } = manifest.generation;

const engines: Record<string, OrtEngine> = {
  "onnxruntime-web (WASM)": {
    kind: "wasm",
    Tensor: ortWeb.Tensor,
    createSession: (model) => ortWeb.InferenceSession.create(model),
  },
  "onnxruntime-node": {
    kind: "native",
    Tensor: ortNode.Tensor as unknown as typeof ortWeb.Tensor,
    createSession: (model) =>
      ortNode.InferenceSession.create(model, {
        intraOpNumThreads: 1,
      }) as unknown as Promise<ortWeb.InferenceSession>,
  },
};

/** One token at position `position` over a past of `position` zero columns. */
function feeds(id: number, position: number): Record<string, Tensor> {
  const result: Record<string, Tensor> = {
    input_ids: { datatype: "INT64", shape: [1, 1], data: BigInt64Array.of(BigInt(id)) },
    attention_mask: {
      datatype: "INT64",
      shape: [1, position + 1],
      data: new BigInt64Array(position + 1).fill(1n),
    },
    position_ids: { datatype: "INT64", shape: [1, 1], data: BigInt64Array.of(BigInt(position)) },
  };
  for (let layer = 0; layer < layers; layer += 1) {
    for (const kind of ["key", "value"]) {
      result[`past_key_values.${layer}.${kind}`] = {
        datatype: "FP32",
        shape: [1, kvHeads, position, headDim],
        data: new Float32Array(kvHeads * position * headDim),
      };
    }
  }
  return result;
}

beforeAll(() => {
  ortWeb.env.wasm.numThreads = 1;
});

describe.each(Object.entries(engines))("createOrtRuntime on %s", (_, engine) => {
  it("returns outputs that no later run overwrites, each in a buffer of its own", async () => {
    const graph = manifest.graphs[manifest.generation.graph]!;
    const runtime = createOrtRuntime(engine, {
      inputs: graph.inputs,
      outputs: graph.outputs,
      loadModel: async () => new Uint8Array(readFileSync(`${DIR}/${graph.file}`)),
    });
    const first = (await runtime.tensors!.run(feeds(200, 0))).outputs;
    const kept = Object.fromEntries(
      Object.entries(first).map(([name, tensor]) => [name, (tensor.data as Float32Array).slice()]),
    );
    // Two more runs of other inputs and shapes: the pool ORT would reuse is the same size or
    // larger.
    const second = (await runtime.tensors!.run(feeds(300, 0))).outputs;
    await runtime.tensors!.run(feeds(400, 3));
    for (const [name, tensor] of Object.entries(first)) {
      const data = tensor.data as Float32Array;
      expect(data, name).toEqual(kept[name]);
      expect(
        data.byteOffset === 0 && data.buffer.byteLength === data.byteLength,
        `${name} owns its buffer`,
      ).toBe(true);
      expect(data.buffer === (second[name]!.data as Float32Array).buffer, name).toBe(false);
    }
    // The second run did compute something else (the check above is not vacuous).
    expect(second.logits!.data).not.toEqual(first.logits!.data);
  });
});

describe.each(Object.entries(engines))("runs begun together on %s", (_, engine) => {
  // Concurrent requests in one isolate share a session (n choices, two users of one model):
  // onnxruntime-web's run() would read another run's emptied input names ("input name cannot
  // be empty") if two overlapped; the runtime gives them turns.
  it("each get the result they would get alone", async () => {
    const graph = manifest.graphs[manifest.generation.graph]!;
    const runtime = createOrtRuntime(engine, {
      inputs: graph.inputs,
      outputs: graph.outputs,
      loadModel: async () => new Uint8Array(readFileSync(`${DIR}/${graph.file}`)),
    });
    const inputs = [feeds(200, 0), feeds(300, 2), feeds(400, 1), feeds(500, 0)];
    const alone: Tensor["data"][] = [];
    for (const input of inputs)
      alone.push((await runtime.tensors!.run(input)).outputs.logits!.data);
    const together = await Promise.all(inputs.map((input) => runtime.tensors!.run(input)));
    together.forEach((result, i) => expect(result.outputs.logits!.data).toEqual(alone[i]));
  });

  it(
    "a run whose signal aborts while it waits " + "its turn does not run, and the next one does",
    async () => {
      const graph = manifest.graphs[manifest.generation.graph]!;
      const runtime = createOrtRuntime(engine, {
        inputs: graph.inputs,
        outputs: graph.outputs,
        loadModel: async () => new Uint8Array(readFileSync(`${DIR}/${graph.file}`)),
      });
      await runtime.load();
      const controller = new AbortController();
      const first = runtime.tensors!.run(feeds(200, 0));
      const waiting = runtime.tensors!.run(feeds(300, 0), { signal: controller.signal });
      controller.abort(new DOMException("client left", "AbortError"));
      const third = runtime.tensors!.run(feeds(400, 0));
      await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
      expect((await first).outputs.logits).toBeDefined();
      expect((await third).outputs.logits).toBeDefined();
    },
  );
});
