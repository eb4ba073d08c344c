"""Cut the fraud model's INT8 graph at its last step, for attributions with a shared prefix.

Usage: /usr/bin/python3 scripts/fraud/split-attribution.py models/fraud-gru
  (writes attribution.onnx beside the manifest's "model" graph, and its entry, attribution, in
  its manifest)

Why: a decision's attribution batch has 14 rows that differ only in the scored (last) step; their
earlier steps are either the card's history (7 rows) or all zeros (7 rows). The whole graph runs
all 14 rows through all 7 steps of both GRU layers. The attribution graph instead runs, in one
session run:

    prefix  transactions [7, P, 180] -> both layers' states after step 6 of 7 (the graph's own
            nodes up to there; layer 2's input projection needs layer 1's last step, so that one
            is computed too), for the P distinct prefixes (the window, and no history at all)
    gather  state_rows [R] (int64): the prefix row each of the R rows starts from
    step    step [1, R, 180] and those states -> scores [R]: the last step of both layers and the
            head, the graph's own nodes, with the two input projections (ih, ih_1) applied to
            the one step instead of all seven (the same QuantizeLinear constants and weights)

Every op is row-wise (static INT8 activations: fixed scales and zero points), so each row's score
is the whole graph's for that row's window, exactly. The step part's batch dimension is named
"rows", the prefix's "batch": ORT plans buffers by those names, and the two differ.
test/unit/tasks/fraud/attribution-split.test.ts holds the two graphs to each other.
"""
import hashlib
import json
import os
import sys

import onnx
from onnx import helper


def split(source, path):
    model = onnx.load(source)
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def only(nodes, op):
        found = [n for n in nodes if n.op_type == op]
        if len(found) != 1:
            raise SystemExit(f"expected one {op}, found {len(found)}")
        return found[0]

    [x] = [i.name for i in graph.input]
    [scores] = [o.name for o in graph.output]
    # A layer's input projection: QuantizeLinear -> MatMulIntegerToFloat -> Split (gates, candidate)
    # -> one Split over the steps for each.
    def projection(tensor):
        quantize = only(consumers[tensor], "QuantizeLinear")
        matmul = only(consumers[quantize.output[0]], "MatMulIntegerToFloat")
        halves = only(consumers[matmul.output[0]], "Split")
        steps = [only(consumers[half], "Split") for half in halves.output]
        return quantize, matmul, halves, steps

    ih = projection(x)
    concat = only(graph.node, "Concat")  # layer 1's outputs, all steps: layer 2's input
    ih_1 = projection(concat.output[0])
    steps = len(concat.input)
    last = steps - 1
    h1_before, h1_last = concat.input[last - 1], concat.input[last]

    # Layer 2's state before its last step: what its last step's recurrent MatMul quantizes.
    gate_add = only(consumers[ih_1[3][0].output[last]], "Add")
    recurrent = producer[next(i for i in gate_add.input if i != ih_1[3][0].output[last])]
    h2_before = producer[producer[recurrent.input[0]].input[0]].input[0]

    def needed(outputs, stops):
        """The graph's nodes that `outputs` need, stopping at `stops`, in graph order."""
        keep, todo = set(), list(outputs)
        while todo:
            name = todo.pop()
            if name in stops or name not in producer:
                continue
            node = producer[name]
            if id(node) in keep:
                continue
            keep.add(id(node))
            todo.extend(node.input)
        return [node for node in graph.node if id(node) in keep]

    initializers = {init.name: init for init in graph.initializer}

    def build(name, nodes, inputs, outputs):
        # In an order where each node follows the nodes it reads from.
        made = {i.name for i in inputs} | set(initializers)
        ordered, todo = [], list(nodes)
        while todo:
            ready = [n for n in todo if all(i in made or i == "" for i in n.input)]
            if not ready:
                raise SystemExit(f"{name}: nodes with inputs nothing makes: {todo[0].name}")
            for node in ready:
                ordered.append(node)
                made.update(node.output)
                todo.remove(node)
        used = {i for node in ordered for i in node.input}
        sub = helper.make_graph(
            ordered,
            name,
            inputs,
            outputs,
            [initializers[i] for i in sorted(used) if i in initializers],
        )
        out = helper.make_model(sub, opset_imports=model.opset_import, producer_name="split-attribution")
        out.ir_version = model.ir_version
        return out

    # prefix: the states after step `last - 1`, for each of the P prefix rows.
    prefix_nodes = needed([h1_before, h2_before], {x})

    # step: the last step from the gathered states, each projection applied to the one step.
    cut = {
        ih[3][0].output[last],
        ih[3][1].output[last],
        ih_1[3][0].output[last],
        ih_1[3][1].output[last],
        h1_before,
        h2_before,
    }
    step_nodes = needed([scores, h1_last], cut)

    def one_step(proj, source, tag):
        quantize, matmul, halves, per_step = proj
        nodes = []
        for node, outputs in (
            (quantize, [f"{tag}/quantized"]),
            (matmul, [f"{tag}/projected"]),
            (halves, [per_step[0].output[last], per_step[1].output[last]]),
        ):
            copy = copy_of(node)
            copy.name = f"{tag}/{node.name}"
            copy.output[:] = outputs
            nodes.append(copy)
        nodes[0].input[0] = source
        nodes[1].input[0] = nodes[0].output[0]
        nodes[2].input[0] = nodes[1].output[0]
        return nodes

    # The step part's tensors and nodes are renamed "step/…": some of its nodes (layer 1's last
    # step) are also in the prefix part, over the prefix rows.
    step_part = one_step(ih, "step", "step_ih") + one_step(ih_1, h1_last, "step_ih_1") + [
        copy_of(node) for node in step_nodes
    ]
    made = {out for node in step_part for out in node.output}
    states = {h1_before: "step/h1", h2_before: "step/h2"}
    for node in step_part:
        node.name = node.name if node.name.startswith("step") else f"step/{node.name}"
        node.input[:] = [
            states.get(i, f"step/{i}" if i in made and i != scores else i) for i in node.input
        ]
        node.output[:] = [o if o == scores else f"step/{o}" for o in node.output]
    gathers = [
        helper.make_node("Gather", [state, "state_rows"], [gathered], name=f"gather {gathered}", axis=1)
        for state, gathered in states.items()
    ]
    attribution = build(
        "attribution",
        prefix_nodes + gathers + step_part,
        [
            helper.make_tensor_value_info(x, onnx.TensorProto.FLOAT, [steps, "batch", 180]),
            helper.make_tensor_value_info("step", onnx.TensorProto.FLOAT, [1, "rows", 180]),
            helper.make_tensor_value_info("state_rows", onnx.TensorProto.INT64, ["rows"]),
        ],
        [helper.make_tensor_value_info(scores, onnx.TensorProto.FLOAT, ["rows"])],
    )
    onnx.save(attribution, path)
    print(f"{path}: {len(attribution.graph.node)} nodes")
    return steps


def copy_of(node):
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    return copy


def described(path):
    data = open(path, "rb").read()
    return {"file": os.path.basename(path), "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def main(directory):
    manifest_path = os.path.join(directory, "manifest.json")
    manifest = json.load(open(manifest_path))
    graph = manifest["graphs"]["model"]
    source = os.path.join(directory, graph["file"])
    if described(source)["sha256"] != graph["sha256"]:
        raise SystemExit(f"{source} does not match the manifest's sha256")
    path = os.path.join(directory, "attribution.onnx")
    steps = split(source, path)
    features = graph["inputs"][0]["shape"][2]
    manifest["graphs"]["attribution"] = {
        **described(path),
        "inputs": [
            graph["inputs"][0],
            {"name": "step", "datatype": "FP32", "shape": [1, -1, features]},
            {"name": "state_rows", "datatype": "INT64", "shape": [-1]},
        ],
        "outputs": graph["outputs"],
        "derived": {"by": "scripts/fraud/split-attribution.py", "source": described(source)},
    }
    with open(manifest_path, "w") as out:
        out.write(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    print(f"{manifest_path}: graph attribution ({steps} steps, cut at the last)")


if __name__ == "__main__":
    main(sys.argv[1])
