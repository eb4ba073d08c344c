// Rewrites a decoder graph so that its steps never copy the KV cache: presents become only the new
// keys/values.
import { decodeModel, encodeModel, type OnnxAttribute, type OnnxNode } from "./onnx-proto";

const INT64 = 7;
const perm = (node: OnnxNode) =>
  node.attribute
    ?.find((a) => a.name === "perm")
    ?.ints?.map(Number)
    .join(",");

/**
 * Rewrites a decoder graph (CONTRACTS.md: presents = Concat(past, new)) so that it never copies the
 * KV cache. Per layer, the exported attention
 *     K = Concat(past_k, k);  S = MatMul(q, Transpose(K));  …softmax → W;  O = MatMul(W, Concat(past_v, v))
 * becomes
 *     S = Concat(MatMul(q, past_kᵀ), MatMul(q, kᵀ));  …;  O = MatMul(W[..., :P], past_v) + MatMul(W[..., P:], v)
 * — the same attention, concatenating only scores ([batch, heads, seq, P+seq]) — and the presents
 * become just the new keys/values ([batch, heads, seq, headDim]). The engine then keeps the cache
 * in a preallocated buffer that it updates in place, one column per step. A graph that does not
 * have the exported pattern is left alone (null).
 *
 * The rewritten model's bytes, or null when some layer does not match the pattern.
 */
export function splitAttention(bytes: Uint8Array, layers: number): Uint8Array | null {
  const model = decodeModel(bytes);
  const graph = model.graph;
  const consumers = (name: string) => graph.node.filter((node) => node.input.includes(name));
  const replace = new Map<OnnxNode, OnnxNode[]>();
  const int64 = (name: string, values: number[]) => ({
    name,
    dataType: INT64,
    dims: [values.length],
    int64Data: values,
  });
  const attr = (name: string, ints: number[]): OnnxAttribute => ({ name, type: 7, ints });
  const pre = "/origin_split";
  graph.initializer.push(
    int64(`${pre}/zero`, [0]),
    int64(`${pre}/end`, [Number.MAX_SAFE_INTEGER]),
    int64(`${pre}/axis3`, [3]),
    int64(`${pre}/two`, [2]),
  );

  for (let l = 0; l < layers; l++) {
    const [pastK, pastV, presentK, presentV] = [
      `past_key_values.${l}.key`,
      `past_key_values.${l}.value`,
      `present.${l}.key`,
      `present.${l}.value`,
    ];
    const concatK = graph.node.find(
      (n) => n.opType === "Concat" && n.input[0] === pastK && n.output[0] === presentK,
    );
    const concatV = graph.node.find(
      (n) => n.opType === "Concat" && n.input[0] === pastV && n.output[0] === presentV,
    );
    if (
      concatK === undefined ||
      concatV === undefined ||
      concatK.input.length !== 2 ||
      concatV.input.length !== 2
    )
      return null;
    const [transposeK, ...otherK] = consumers(presentK);
    if (transposeK?.opType !== "Transpose" || otherK.length > 0 || perm(transposeK) !== "0,1,3,2")
      return null;
    const [scores, ...otherT] = consumers(transposeK.output[0]!);
    if (
      scores?.opType !== "MatMul" ||
      otherT.length > 0 ||
      scores.input[1] !== transposeK.output[0]
    )
      return null;
    const [weighted, ...otherV] = consumers(presentV);
    if (weighted?.opType !== "MatMul" || otherV.length > 0 || weighted.input[1] !== presentV)
      return null;

    const p = `${pre}/${l}`;
    const newK = concatK.input[1]!;
    const newV = concatV.input[1]!;
    const q = scores.input[0]!;
    const w = weighted.input[0]!;
    replace.set(concatK, [
      { opType: "Identity", name: `${p}/present_k`, input: [newK], output: [presentK] },
    ]);
    replace.set(transposeK, []);
    replace.set(scores, [
      {
        opType: "Transpose",
        name: `${p}/past_kT`,
        input: [pastK],
        output: [`${p}/past_kT`],
        attribute: [attr("perm", [0, 1, 3, 2])],
      },
      {
        opType: "Transpose",
        name: `${p}/new_kT`,
        input: [newK],
        output: [`${p}/new_kT`],
        attribute: [attr("perm", [0, 1, 3, 2])],
      },
      {
        opType: "MatMul",
        name: `${p}/scores_past`,
        input: [q, `${p}/past_kT`],
        output: [`${p}/scores_past`],
      },
      {
        opType: "MatMul",
        name: `${p}/scores_new`,
        input: [q, `${p}/new_kT`],
        output: [`${p}/scores_new`],
      },
      {
        opType: "Concat",
        name: `${p}/scores`,
        input: [`${p}/scores_past`, `${p}/scores_new`],
        output: [scores.output[0]!],
        attribute: [{ name: "axis", type: 2, i: -1 }],
      },
    ]);
    replace.set(concatV, [
      { opType: "Identity", name: `${p}/present_v`, input: [newV], output: [presentV] },
    ]);
    replace.set(weighted, [
      { opType: "Shape", name: `${p}/past_shape`, input: [pastV], output: [`${p}/past_shape`] },
      {
        opType: "Gather",
        name: `${p}/past_len`,
        input: [`${p}/past_shape`, `${pre}/two`],
        output: [`${p}/past_len`],
        attribute: [{ name: "axis", type: 2, i: 0 }],
      },
      {
        opType: "Slice",
        name: `${p}/w_past`,
        input: [w, `${pre}/zero`, `${p}/past_len`, `${pre}/axis3`],
        output: [`${p}/w_past`],
      },
      {
        opType: "Slice",
        name: `${p}/w_new`,
        input: [w, `${p}/past_len`, `${pre}/end`, `${pre}/axis3`],
        output: [`${p}/w_new`],
      },
      {
        opType: "MatMul",
        name: `${p}/out_past`,
        input: [`${p}/w_past`, pastV],
        output: [`${p}/out_past`],
      },
      {
        opType: "MatMul",
        name: `${p}/out_new`,
        input: [`${p}/w_new`, newV],
        output: [`${p}/out_new`],
      },
      {
        opType: "Add",
        name: `${p}/out`,
        input: [`${p}/out_past`, `${p}/out_new`],
        output: [weighted.output[0]!],
      },
    ]);
  }
  graph.node = graph.node.flatMap((node) => replace.get(node) ?? [node]);
  // The presents are [batch, heads, seq, headDim] now: drop their declared shapes, and any
  // inferred shapes that no longer hold.
  for (const output of graph.output)
    if (output.name.startsWith("present.")) output.type = { tensorType: { elemType: 1 } };
  graph.valueInfo = [];
  return encodeModel(model);
}
