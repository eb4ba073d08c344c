// Rewrites a decoder graph so that it computes logits only at the positions each row asks for (the
// last one, for a prefill).
import { decodeModel, encodeModel, type OnnxModel, type OnnxNode } from "./onnx-proto";

export const LOGITS_INDEX = "logits_index";

/**
 * Rewrites a decoder graph so that it computes logits only at the positions each row asks for
 * instead of every position: a prefill of n tokens needs only the last position's logits, yet the
 * graph as exported runs the final norm and the LM head over all n (and hands back n × vocab
 * floats). The rewrite adds an input `logits_index` (INT64 [batch, positions, 1]: the positions
 * whose logits a row wants; one, n − 1, for a prompt of n tokens, right-padded or not, and 0 for a
 * one-token decode step; every prompt position for a prefill that reports the prompt's logprobs,
 * vLLM's echo) and gathers the hidden states there before the final norm:
 *     H = last residual sum [batch, seq, hidden];  H' = GatherND(H, logits_index, batch_dims = 1) [batch, positions, hidden]
 * `logits` becomes [batch, positions, vocab]. The final norm and the LM head act per position, so
 * the row's logits are those the full graph computes at those positions. The residual sum is found
 * by walking back from `logits` along the activations (the first input that is not a weight or a
 * constant) to the first Add of two activations. A graph where that walk finds none is left alone
 * (null).
 *
 * The rewritten model's bytes, or null when the graph's LM head input cannot be found.
 */
export function lastPositionLogits(bytes: Uint8Array): Uint8Array | null {
  const model = decodeModel(bytes);
  return rewrite(model) ? encodeModel(model) : null;
}

function rewrite(model: OnnxModel): boolean {
  const graph = model.graph;
  const producer = new Map<string, OnnxNode>();
  for (const node of graph.node) for (const output of node.output) producer.set(output, node);
  const weights = new Set(graph.initializer.map((tensor) => tensor.name));
  const isActivation = (name: string) => {
    if (name === "" || weights.has(name)) return false;
    const node = producer.get(name);
    return node === undefined
      ? graph.input.some((input) => input.name === name)
      : node.opType !== "Constant";
  };

  let name = "logits";
  let hidden: string | undefined;
  for (let hops = 0; hops < 64 && hidden === undefined; hops++) {
    const node = producer.get(name);
    if (node === undefined) return false;
    const activations = node.input.filter(isActivation);
    if (node.opType === "Add" && activations.length === 2) hidden = name;
    else if (activations[0] === undefined) return false;
    else name = activations[0];
  }
  if (hidden === undefined) return false;

  const gathered = "/origin_last_logits/hidden";
  // `head`: the nodes between the residual sum and `logits` (the final norm and the LM head).
  const head = new Set<OnnxNode>();
  const consumers = (tensor: string) => graph.node.filter((node) => node.input.includes(tensor));
  const reaches = new Map<OnnxNode, boolean>();
  const reachesLogits = (node: OnnxNode): boolean => {
    const known = reaches.get(node);
    if (known !== undefined) return known;
    reaches.set(node, false);
    const result =
      node.output.includes("logits") ||
      node.output.some((output) => consumers(output).some(reachesLogits));
    reaches.set(node, result);
    return result;
  };
  for (const node of consumers(hidden)) if (reachesLogits(node)) head.add(node);
  if (head.size === 0) return false;
  for (const node of head)
    node.input = node.input.map((input) => (input === hidden ? gathered : input));

  const at = graph.node.findIndex((node) => head.has(node));
  graph.node.splice(at, 0, {
    opType: "GatherND",
    name: "/origin_last_logits/gather",
    input: [hidden, LOGITS_INDEX],
    output: [gathered],
    attribute: [{ name: "batch_dims", type: 2, i: 1 }],
  });
  graph.input.push({
    name: LOGITS_INDEX,
    type: {
      tensorType: {
        elemType: 7,
        shape: { dim: [{ dimParam: "batch" }, { dimParam: "logits_positions" }, { dimValue: 1 }] },
      },
    },
  });
  for (const output of graph.output)
    if (output.name === "logits") output.type = { tensorType: { elemType: 1 } };
  graph.valueInfo = [];
  return true;
}
