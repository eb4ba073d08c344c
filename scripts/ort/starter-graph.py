# Writes src/runtime/wasm/starter.onnx: the small graph the Worker creates and runs once while
# its isolate starts (src/runtime/wasm/ort.ts), so that ORT's initialisation and the WASM code
# of session creation, of a run and of the edge graphs' common kernels (int64 index arithmetic,
# Slice/Concat/Gather, ReduceSum, MatMul, Clip/Div, Cast, Unsqueeze) are compiled before the
# first request rather than in it. Numbers are irrelevant; only the code paths matter.
#   /usr/bin/python3 scripts/ort/starter-graph.py
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

def const(name, value):
    return numpy_helper.from_array(np.array(value), name)

initializers = [
    const("k3", np.array([3], dtype=np.int64)), const("k5", np.array([5], dtype=np.int64)),
    const("k1", np.array([1], dtype=np.int64)), const("start", np.array([0], dtype=np.int64)),
    const("end", np.array([2], dtype=np.int64)), const("axis", np.array([1], dtype=np.int64)),
    const("table", np.ones((8, 4), dtype=np.float32)), const("w", np.ones((4, 2), dtype=np.float32)),
    const("lo", np.array(-1, dtype=np.float32)), const("hi", np.array(1, dtype=np.float32)),
    const("two", np.array([2], dtype=np.float32)),
]
N = helper.make_node
nodes = [
    N("Mod", ["ids", "k3"], ["a"]), N("Mul", ["a", "k5"], ["b"]), N("Add", ["b", "k1"], ["b1"]), N("Mod", ["b1", "k3"], ["b2"]),
    N("Slice", ["b2", "start", "end", "axis"], ["s"]), N("Concat", ["s", "s"], ["u"], axis=1), N("Gather", ["table", "u"], ["g"]),
    N("ReduceSum", ["g", "axis"], ["r"], keepdims=0), N("MatMul", ["r", "w"], ["m"]), N("Clip", ["m", "lo", "hi"], ["cl"]),
    N("Div", ["cl", "two"], ["d"]), N("Cast", ["ids"], ["f"], to=TensorProto.FLOAT), N("ReduceSum", ["f", "axis"], ["fs"], keepdims=1),
    N("Add", ["d", "fs"], ["y0"]), N("Unsqueeze", ["y0", "axis"], ["y"]),
]
graph = helper.make_graph(nodes, "starter", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2])], initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="edge-inference")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, "src/runtime/wasm/starter.onnx")
print(f"src/runtime/wasm/starter.onnx: {len(model.SerializeToString())} bytes")
