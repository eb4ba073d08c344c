"""Unroll ONNX GRU / LSTM nodes into explicit MatMul + elementwise ops, with `onnx` only.

Usage: /usr/bin/python3 scripts/unroll-rnn.py in.onnx out.onnx

Why: scripts/quantize.py quantizes MatMul/Gemm with float initializer weights and leaves
GRU/LSTM alone, so a recurrent model keeps its recurrent math in FP32. After this pass the
weights are plain [K, N] MatMul initializers and quantize.py picks them up.

Each GRU/LSTM node (one direction: forward or reverse; layout 0) over a static sequence
length T becomes, following the ONNX operator spec equations:

    XP = X @ W^T + bias            one MatMul over all T steps, X [T, B, I] (a 3-D MatMul is
                                   exactly X.reshape(T*B, I) @ W^T reshaped back)
    per step t: H_{t-1} @ R^T      one MatMul per step (skipped at the first step when the
                                   initial state is absent or a constant all-zero tensor)
    + Split / Add / Sigmoid / Tanh / Mul / Sub, Concat (+ Unsqueeze) for Y

  GRU (gates z, r, h):
    z = sigmoid(Xz + Hp Rz^T + Wbz + Rbz), r = sigmoid(Xr + Hp Rr^T + Wbr + Rbr)
    linear_before_reset=1: h~ = tanh(Xh + Wbh + r * (Hp Rh^T + Rbh))
    linear_before_reset=0: h~ = tanh(Xh + Wbh + Rbh + (r * Hp) Rh^T)
    H = (1 - z) * h~ + z * Hp  = h~ + z * (Hp - h~)
  LSTM (gates i, o, f, c; optional peepholes P = [Pi, Po, Pf]):
    i = sigmoid(Xi + Hp Ri^T + Pi*Cp + Wbi + Rbi), f = sigmoid(... + Pf*Cp ...),
    c~ = tanh(Xc + Hp Rc^T + Wbc + Rbc), C = f*Cp + i*c~, o = sigmoid(... + Po*C), H = o*tanh(C)

Outputs: Y [T, 1, B, H] (Concat over steps + Unsqueeze; when Y's only consumer is a
Squeeze of axis 1, that Squeeze is folded away), Y_h [1, B, H], Y_c [1, B, H].

Supported attributes: hidden_size, direction forward|reverse, default activations
(Sigmoid/Tanh[/Tanh]), linear_before_reset 0|1, layout 0, no clip, input_forget 0;
sequence_lens absent or a constant equal to T everywhere; initial_h/initial_c absent,
initializers, or any other tensor. Anything else raises instead of being silently wrong.

Ops emitted: MatMul, Add, Sub, Mul, Sigmoid, Tanh, Split (explicit sizes), Concat,
Unsqueeze — valid at the model's own opset (attribute forms below 13, input forms from 13),
and still valid after quantize.py raises the opset to 11. The opset is left unchanged.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnx_graph import replace_nodes


def attrs_of(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


class Unroller:
    def __init__(self, model):
        self.model = model
        self.graph = model.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
        self.initializers = {t.name: t for t in self.graph.initializer}
        self.new_initializers = []
        self.counter = 0
        inferred = onnx.shape_inference.infer_shapes(model)
        self.shapes = {}
        for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
            dims = vi.type.tensor_type.shape.dim
            self.shapes[vi.name] = [d.dim_value if d.HasField("dim_value") else None for d in dims]
        self.consumers = {}
        for node in self.graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self.graph_outputs = {o.name for o in self.graph.output}
        self.removed = set()  # ids of nodes folded into a rewrite (Squeeze after Y)

    # ---------------------------------------------------------------- helpers
    def name(self, base):
        self.counter += 1
        return f"{base}_u{self.counter}"

    def constant(self, base, array):
        tensor = numpy_helper.from_array(np.ascontiguousarray(array), self.name(base))
        self.new_initializers.append(tensor)
        return tensor.name

    def const_array(self, name):
        if not name:
            return None
        tensor = self.initializers.get(name)
        return None if tensor is None else numpy_helper.to_array(tensor)

    def node(self, op, inputs, outputs=None, **kwargs):
        outputs = outputs or [self.name(op.lower())]
        self.out.append(helper.make_node(op, inputs, outputs, self.name(f"{self.prefix}/{op}"), **kwargs))
        return outputs[0] if len(outputs) == 1 else outputs

    def split(self, x, axis, sizes):
        outputs = [self.name("split") for _ in sizes]
        if self.opset >= 13:
            sizes_name = self.constant("split_sizes", np.array(sizes, dtype=np.int64))
            self.node("Split", [x, sizes_name], outputs, axis=axis)
        else:
            self.node("Split", [x], outputs, axis=axis, split=list(sizes))
        return outputs

    def unsqueeze(self, x, axes, output=None):
        if self.opset >= 13:
            return self.node("Unsqueeze", [x, self.constant("axes", np.array(axes, dtype=np.int64))],
                             [output] if output else None)
        return self.node("Unsqueeze", [x], [output] if output else None, axes=list(axes))

    def squeeze_axes(self, node):
        if node.op_type != "Squeeze":
            return None
        if self.opset >= 13:
            if len(node.input) < 2:
                return None
            axes = self.const_array(node.input[1])
            return None if axes is None else [int(a) for a in axes.reshape(-1)]
        return list(attrs_of(node).get("axes", []))

    def used(self, name):
        return bool(name) and (name in self.graph_outputs or name in self.consumers)

    # ------------------------------------------------------------ validation
    def common(self, node, kind):
        a = attrs_of(node)
        hidden = int(a["hidden_size"])
        direction = a.get("direction", b"forward")
        direction = direction.decode() if isinstance(direction, bytes) else direction
        if direction not in ("forward", "reverse"):
            raise ValueError(f"{node.name}: direction {direction} not supported (forward/reverse only)")
        if a.get("layout", 0) != 0:
            raise ValueError(f"{node.name}: layout {a['layout']} not supported")
        if "clip" in a:
            raise ValueError(f"{node.name}: clip not supported")
        defaults = [b"Sigmoid", b"Tanh"] if kind == "GRU" else [b"Sigmoid", b"Tanh", b"Tanh"]
        acts = [x if isinstance(x, bytes) else x.encode() for x in a.get("activations", defaults)]
        if [x.lower() for x in acts] != [x.lower() for x in defaults]:
            raise ValueError(f"{node.name}: activations {acts} not supported (defaults only)")
        if "activation_alpha" in a or "activation_beta" in a:
            raise ValueError(f"{node.name}: activation_alpha/beta not supported")
        shape = self.shapes.get(node.input[0])
        if not shape or len(shape) != 3 or shape[0] is None:
            raise ValueError(f"{node.name}: needs a static sequence length, X shape is {shape}")
        steps = shape[0]
        if len(node.input) > 4 and node.input[4]:
            lens = self.const_array(node.input[4])
            if lens is None or not np.all(lens == steps):
                raise ValueError(f"{node.name}: sequence_lens must be absent or constant == {steps}")
        weights = [self.const_array(node.input[i]) for i in (1, 2)]
        if any(w is None for w in weights):
            raise ValueError(f"{node.name}: W and R must be initializers")
        W, R = (w.astype(np.float32) for w in weights)
        if W.shape[0] != 1:
            raise ValueError(f"{node.name}: num_directions {W.shape[0]} not supported")
        gates = 3 if kind == "GRU" else 4
        B = self.const_array(node.input[3]) if len(node.input) > 3 and node.input[3] else None
        if len(node.input) > 3 and node.input[3] and B is None:
            raise ValueError(f"{node.name}: B must be an initializer")
        if B is None:
            B = np.zeros((1, 2 * gates * hidden), dtype=np.float32)
        B = B.astype(np.float32)
        Wb, Rb = B[0, : gates * hidden], B[0, gates * hidden:]
        order = list(range(steps)) if direction == "forward" else list(range(steps - 1, -1, -1))
        return a, hidden, order, W[0], R[0], Wb, Rb

    def initial_state(self, node, index):
        """(tensor name or None, is_zero): None/True when absent or a constant all-zero tensor."""
        if len(node.input) <= index or not node.input[index]:
            return None, True
        value = self.const_array(node.input[index])
        if value is not None and not np.any(value):
            return None, True
        return node.input[index], False

    # -------------------------------------------------------------- outputs
    def emit_outputs(self, node, hs, h_last, c_last=None):
        outs = list(node.output) + [""] * 3
        y, y_h, y_c = outs[0], outs[1], outs[2]
        if self.used(y):
            consumers = self.consumers.get(y, [])
            if (y not in self.graph_outputs and len(consumers) == 1 and self.squeeze_axes(consumers[0]) in ([1], [-3])):
                squeeze = consumers[0]
                self.removed.add(id(squeeze))
                self.node("Concat", hs, [squeeze.output[0]], axis=0)  # [T, B, H], what the Squeeze produced
            else:
                seq = self.node("Concat", hs, axis=0)
                self.unsqueeze(seq, [1], y)
        if self.used(y_h):
            self.node("Identity", [h_last], [y_h])
        if self.used(y_c) and c_last is not None:
            self.node("Identity", [c_last], [y_c])

    def input_projection(self, x, W_T, bias, T, sizes):
        """X @ W^T + bias for all steps at once, split by gate groups, then per time step."""
        proj = self.node("MatMul", [x, self.constant(f"{self.prefix}/W_T", W_T)])
        proj = self.node("Add", [proj, self.constant(f"{self.prefix}/W_bias", bias)])
        groups = self.split(proj, 2, sizes) if len(sizes) > 1 else [proj]
        return [self.split(g, 0, [1] * T) if T > 1 else [g] for g in groups]  # [group][t] -> [1, B, n]

    # ------------------------------------------------------------------ GRU
    def unroll_gru(self, node):
        a, H, order, W, R, Wb, Rb = self.common(node, "GRU")
        T = len(order)
        lbr = int(a.get("linear_before_reset", 0))
        # Input bias: z, r get Wb + Rb; h gets Wbh (+ Rbh when linear_before_reset=0, it is outside r*).
        bias = np.concatenate([Wb[: 2 * H] + Rb[: 2 * H], Wb[2 * H:] + (0 if lbr else Rb[2 * H:])])
        xzr, xh = self.input_projection(node.input[0], W.T, bias, T, [2 * H, H])
        h_prev, zero = self.initial_state(node, 5)
        rbh = self.constant(f"{self.prefix}/Rbh", Rb[2 * H:].copy()) if lbr else None
        if lbr:
            r_all = self.constant(f"{self.prefix}/R_T", R.T)  # [H, 3H]
        else:
            r_zr = self.constant(f"{self.prefix}/Rzr_T", R[: 2 * H].T)  # [H, 2H]
            r_h = self.constant(f"{self.prefix}/Rh_T", R[2 * H:].T)  # [H, H]
        hs = [None] * T
        for t in order:
            if h_prev is None:  # zero state: every H_{t-1} R^T term vanishes
                z, r = self.split(self.node("Sigmoid", [xzr[t]]), 2, [H, H])
                pre = self.node("Add", [xh[t], self.node("Mul", [r, rbh])]) if lbr else xh[t]
                cand = self.node("Tanh", [pre])
                h = self.node("Sub", [cand, self.node("Mul", [z, cand])])
            else:
                if lbr:
                    rec_zr, rec_h = self.split(self.node("MatMul", [h_prev, r_all]), 2, [2 * H, H])
                else:
                    rec_zr = self.node("MatMul", [h_prev, r_zr])
                z, r = self.split(self.node("Sigmoid", [self.node("Add", [xzr[t], rec_zr])]), 2, [H, H])
                if lbr:
                    gated = self.node("Mul", [r, self.node("Add", [rec_h, rbh])])
                else:
                    gated = self.node("MatMul", [self.node("Mul", [r, h_prev]), r_h])
                cand = self.node("Tanh", [self.node("Add", [xh[t], gated])])
                h = self.node("Add", [cand, self.node("Mul", [z, self.node("Sub", [h_prev, cand])])])
            hs[t] = h
            h_prev = h
        self.emit_outputs(node, hs, h_prev)

    # ----------------------------------------------------------------- LSTM
    def unroll_lstm(self, node):
        a, H, order, W, R, Wb, Rb = self.common(node, "LSTM")
        T = len(order)
        if int(a.get("input_forget", 0)):
            raise ValueError(f"{node.name}: input_forget not supported")
        peep = self.const_array(node.input[7]) if len(node.input) > 7 and node.input[7] else None
        if len(node.input) > 7 and node.input[7] and peep is None:
            raise ValueError(f"{node.name}: P must be an initializer")
        if peep is not None and not np.any(peep):
            peep = None
        (x_all,) = self.input_projection(node.input[0], W.T, Wb + Rb, T, [4 * H])
        h_prev, _ = self.initial_state(node, 5)
        c_prev, _ = self.initial_state(node, 6)
        r_all = self.constant(f"{self.prefix}/R_T", R.T)  # [H, 4H]
        if peep is not None:
            p = peep.astype(np.float32)[0]
            pi, po, pf = (self.constant(f"{self.prefix}/P{g}", p[k * H:(k + 1) * H].copy()) for k, g in enumerate("iof"))
        hs = [None] * T
        for t in order:
            gates = x_all[t] if h_prev is None else self.node("Add", [x_all[t], self.node("MatMul", [h_prev, r_all])])
            if peep is None:
                iof, c_in = self.split(gates, 2, [3 * H, H])
                i, o, f = self.split(self.node("Sigmoid", [iof]), 2, [H, H, H])
            else:
                i_in, o_in, f_in, c_in = self.split(gates, 2, [H, H, H, H])
                if c_prev is not None:
                    i_in = self.node("Add", [i_in, self.node("Mul", [pi, c_prev])])
                    f_in = self.node("Add", [f_in, self.node("Mul", [pf, c_prev])])
                i, f = self.node("Sigmoid", [i_in]), self.node("Sigmoid", [f_in])
            cand = self.node("Tanh", [c_in])
            c = self.node("Mul", [i, cand])
            if c_prev is not None:
                c = self.node("Add", [self.node("Mul", [f, c_prev]), c])
            if peep is not None:
                o = self.node("Sigmoid", [self.node("Add", [o_in, self.node("Mul", [po, c])])])
            h = self.node("Mul", [o, self.node("Tanh", [c])])
            hs[t] = h
            h_prev, c_prev = h, c
        self.emit_outputs(node, hs, h_prev, c_prev)

    # ------------------------------------------------------------------ run
    def run(self):
        handlers = {"GRU": self.unroll_gru, "LSTM": self.unroll_lstm}
        rewritten, nodes = {}, []
        for index, node in enumerate(self.graph.node):
            handler = handlers.get(node.op_type) if node.domain in ("", "ai.onnx") else None
            if handler is None:
                nodes.append(node)
                continue
            self.out, self.prefix = [], node.name or f"{node.op_type}_{index}"
            handler(node)
            rewritten[id(node)] = self.out
            nodes.append(node)
        final = []
        for node in nodes:
            if id(node) in self.removed:
                continue
            final.extend(rewritten.get(id(node), [node]))
        counts = {}
        for node in self.graph.node:
            if id(node) in rewritten:
                counts[node.op_type] = counts.get(node.op_type, 0) + 1
        replace_nodes(self.graph, final, self.new_initializers, self.initializers)
        return counts


def main(src, dst):
    model = onnx.load(src)
    counts = Unroller(model).run()
    onnx.checker.check_model(model)
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.save(model, dst)
    ops = {}
    for node in model.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    print(f"unrolled {counts or 'nothing'} -> {dst}")
    print("op counts: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: unroll-rnn.py in.onnx out.onnx")
    main(sys.argv[1], sys.argv[2])
