"""Generic INT8 dynamic quantization of an ONNX model, written with `onnx` only.

Usage: /usr/bin/python3 scripts/quantize.py in.onnx out.onnx [--calibration ranges.json [--input-max HI]]
       /usr/bin/python3 scripts/quantize.py --probe in.onnx out.onnx

Static activations (--calibration): for a MatMul/Gemm/Conv whose input has a calibrated
[min, max] in ranges.json ({"ranges": {name: {"min", "max"}}}, written by e.g.
scripts/fraud/calibrate.mjs), the activation is quantized with CONSTANT uint8 parameters
(QuantizeLinear) and the product computed by onnxruntime's com.microsoft
MatMulIntegerToFloat (the node its optimizer fuses the dynamic pattern into); a Conv's
by ConvInteger with the constant zero point, then one constant Mul (x_scale * W_scale). A sample's
result then no longer depends on the other samples in its batch, and native and WASM
kernels produce the same integers. Activations whose calibrated range lies inside
[-1, 1] (GRU states) get exactly [-1, 1]; for the others --input-max raises the upper
bound (default 2.0: an unclipped, growing feature such as IBM's min-max Time must not
saturate right after calibration). --probe writes a copy of the model with every
activation this pass would quantize exposed as an extra graph output, for calibration.

What it rewrites (everything else, e.g. GRU/LSTM, is left untouched):

* MatMul / Gemm whose weight is a float initializer -> onnxruntime's dynamic
  quantization pattern:
      DynamicQuantizeLinear(x) -> (x_u8, x_scale, x_zp)
      MatMulInteger(x_u8, W_s8, x_zp, W_zp=0) -> int32
      Cast(float) -> Mul(x_scale * W_scale[per output channel]) [-> Add(bias)]
  Weights are symmetric int8 per output channel with a 7-bit range (+-63):
  x86 CPUs without VNNI compute u8*s8 products in saturating int16 pairs, and
  the reduced range keeps every pair sum in range, so native and WASM runtimes
  produce the same integers.
  A MatMul whose only reader is Add(bias [N]) (torch's Linear on a 3-D input) takes the
  bias into its product; a weight reached through an Identity (torch.onnx.export's alias
  for a weight shared by several nodes) counts as the initializer, quantized once.
* Conv whose weight is a float initializer -> DynamicQuantizeLinear ->
  ConvInteger -> Cast -> Mul(x_scale * W_scale per output channel) [-> Add].
  onnxruntime's ConvInteger takes uint8 weights and a single weight zero
  point, so weights are stored symmetric around 128 (full +-127 range: the
  u8*u8 kernels widen to 16 bits and cannot saturate) and the per-channel
  scale is applied after the integer convolution.
* Gather whose data is a float initializer (embedding tables) -> the table is
  stored as int8 with one scale per row; at run time
      Gather(table_s8, ids) -> Cast(float) -> Mul(Gather(row_scales, ids))
  so only the looked-up rows are dequantized. A table narrower than
  MIN_ROW_SCALE_WIDTH columns (e.g. an n-gram bag folded to [rows, 2] logits) gets one
  scale per column instead, Mul(column_scales): a 4-byte scale per row would
  outweigh its int8 values.

Every op used (DynamicQuantizeLinear, MatMulInteger, ConvInteger, Cast, Mul,
Add, Gather)
is implemented by onnxruntime's CPU provider, including the WASM build.
"""
import argparse
import json

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnx_graph import replace_nodes

WEIGHT_QMAX = 63  # 7-bit symmetric weights, see module docstring
CONV_QMAX = 127  # uint8 weights around zero point 128
EMBEDDING_QMAX = 127  # Gather never multiplies int8 values, so the full range is safe
MIN_ROW_SCALE_WIDTH = 16  # narrower tables: per-column scales (see module docstring)


class Rewriter:
    def __init__(self, model, ranges=None):
        self.ranges = ranges or {}  # activation name -> (lo, hi): static quantization
        self.static_activations = {}
        self.graph = model.graph
        self.initializers = {t.name: t for t in self.graph.initializer}
        # torch.onnx.export hands a weight used by several nodes (an unrolled RNN's recurrent matrix)
        # to all but one of them through an Identity node: see through it.
        self.aliases = {n.output[0]: n.input[0] for n in self.graph.node
                        if n.op_type == "Identity" and n.input[0] in self.initializers}
        self.new_initializers = []
        self.counter = 0
        self.shared = {}  # weight initializer (+ transform) -> its quantized constants, for weights used by several nodes

    def name(self, base):
        self.counter += 1
        return f"{base}_q{self.counter}"

    def constant(self, base, array):
        tensor = numpy_helper.from_array(array, self.name(base))
        self.new_initializers.append(tensor)
        return tensor.name

    def float_weight(self, name):
        tensor = self.initializers.get(self.aliases.get(name, name))
        if tensor is None or tensor.data_type != TensorProto.FLOAT:
            return None
        return numpy_helper.to_array(tensor)

    def quantize_matmul(self, node, weight, bias=None, weight_key=None):
        """Nodes computing input[0] @ weight (+ bias) with weight [K, N].

        weight_key identifies the float weight (initializer name + how it was transformed): nodes
        sharing a weight (e.g. a recurrent matrix in an unrolled RNN) share one quantized copy.
        """
        if weight_key is not None and weight_key in self.shared:
            w_name, w_zero, w_scale = self.shared[weight_key]
        else:
            scale = np.maximum(np.abs(weight).max(axis=0), 1e-12) / WEIGHT_QMAX  # per output column
            q_weight = np.clip(np.round(weight / scale), -WEIGHT_QMAX, WEIGHT_QMAX).astype(np.int8)
            w_name = self.constant(f"{node.name}_W", q_weight)
            w_zero = self.constant(f"{node.name}_W_zero", np.zeros(weight.shape[1], dtype=np.int8))
            w_scale = self.constant(f"{node.name}_W_scale", scale.astype(np.float32))
            if weight_key is not None:
                self.shared[weight_key] = (w_name, w_zero, w_scale)
        if node.input[0] in self.ranges:
            return self.static_matmul(node, w_name, w_zero, w_scale, bias)
        return self.dynamic_product(node, "MatMulInteger", w_name, w_zero, w_scale, bias)

    def dynamic_product(self, node, integer_op, w_name, w_zero, w_scale, bias, bias_shape=(-1,)):
        """DynamicQuantizeLinear(x) -> integer_op -> Cast -> Mul(x_scale * W_scale) [-> Add bias]."""
        x_q, x_scale, x_zero = self.name("x_u8"), self.name("x_scale"), self.name("x_zero")
        acc, acc_f, scale_all = self.name("acc_i32"), self.name("acc_f32"), self.name("scale")
        product = node.output[0] if bias is None else self.name("product")
        quantize = helper.make_node("DynamicQuantizeLinear", [node.input[0]], [x_q, x_scale, x_zero], self.name("dql"))
        integer = helper.make_node(integer_op, [x_q, w_name, x_zero, w_zero], [acc],
                                   self.name("matmul_int" if integer_op == "MatMulInteger" else "conv_int"))
        if integer_op == "ConvInteger":
            integer.attribute.extend(node.attribute)  # same pads/strides/dilations/group
        nodes = [
            quantize,
            integer,
            helper.make_node("Cast", [acc], [acc_f], self.name("cast"), to=TensorProto.FLOAT),
            helper.make_node("Mul", [x_scale, w_scale], [scale_all], self.name("scale_mul")),
            helper.make_node("Mul", [acc_f, scale_all], [product], self.name("dequant")),
        ]
        if bias is not None:
            b_name = self.constant(f"{node.name}_bias", bias.reshape(bias_shape).astype(np.float32))
            nodes.append(helper.make_node("Add", [product, b_name], [node.output[0]], self.name("bias")))
        return nodes

    def static_matmul(self, node, w_name, w_zero, w_scale, bias):
        """QuantizeLinear with calibrated constants, then MatMulIntegerToFloat (+ bias)."""
        x = node.input[0]
        x_scale, x_zero, _ = self.static_activation(x)
        x_q = self.name("x_u8")
        inputs = [x_q, w_name, x_scale, w_scale, x_zero, w_zero]
        if bias is not None:
            inputs.append(self.constant(f"{node.name}_bias", bias.astype(np.float32)))
        return [
            helper.make_node("QuantizeLinear", [x, x_scale, x_zero], [x_q], self.name("ql")),
            helper.make_node("MatMulIntegerToFloat", inputs, [node.output[0]], self.name("mmitf"), domain="com.microsoft"),
        ]

    def rewrite_gemm(self, node):
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        weight = self.float_weight(node.input[1])
        if weight is None or attrs.get("transA", 0) or weight.ndim != 2:
            return None
        if attrs.get("transB", 0):
            weight = weight.T
        weight = weight * attrs.get("alpha", 1.0)
        bias = None
        if len(node.input) > 2 and node.input[2]:
            bias = self.float_weight(node.input[2])
            if bias is None:
                return None
            bias = bias * attrs.get("beta", 1.0)
        key = ("Gemm", self.aliases.get(node.input[1], node.input[1]), bool(attrs.get("transB", 0)), float(attrs.get("alpha", 1.0)))
        return self.quantize_matmul(node, weight, bias, weight_key=key)

    def rewrite_matmul(self, node):
        weight = self.float_weight(node.input[1])
        if weight is None or weight.ndim != 2:
            return None
        key = ("MatMul", self.aliases.get(node.input[1], node.input[1]))
        # MatMul followed by its only reader Add(bias [N]) (torch's Linear on a 3-D input): one node with a bias.
        readers = self.readers.get(node.output[0], [])
        if len(readers) == 1 and readers[0].op_type == "Add" and node.output[0] not in self.graph_outputs:
            add = readers[0]
            other = add.input[1] if add.input[0] == node.output[0] else add.input[0]
            bias = self.float_weight(other)
            if bias is not None and bias.shape == (weight.shape[1],):
                self.folded.add(id(add))
                fused = helper.make_node("MatMul", list(node.input), [add.output[0]], node.name)
                return self.quantize_matmul(fused, weight, bias, weight_key=key)
        return self.quantize_matmul(node, weight, weight_key=key)

    def rewrite_conv(self, node):
        weight = self.float_weight(node.input[1])
        if weight is None:
            return None
        bias = None
        if len(node.input) > 2 and node.input[2]:
            bias = self.float_weight(node.input[2])
            if bias is None:
                return None
        # Per output channel scale, shaped [C_out, 1, ...] to broadcast over [N, C_out, ...].
        channel_shape = (-1,) + (1,) * (weight.ndim - 2)
        scale = np.maximum(np.abs(weight).reshape(weight.shape[0], -1).max(axis=1), 1e-12) / CONV_QMAX
        q_weight = (np.clip(np.round(weight / scale.reshape((-1,) + (1,) * (weight.ndim - 1))),
                            -CONV_QMAX, CONV_QMAX) + 128).astype(np.uint8)
        w_name = self.constant(f"{node.name}_W", q_weight)
        w_zero = self.constant(f"{node.name}_W_zero", np.array(128, dtype=np.uint8))
        w_scale = self.constant(f"{node.name}_W_scale", scale.reshape(channel_shape).astype(np.float32))
        if node.input[0] in self.ranges:
            return self.static_conv(node, w_name, w_zero, scale.reshape(channel_shape), bias, channel_shape)
        return self.dynamic_product(node, "ConvInteger", w_name, w_zero, w_scale, bias, channel_shape)

    def static_activation(self, x):
        """Constant uint8 quantization parameters of a calibrated activation (shared by its readers)."""
        if x not in self.static_activations:
            lo, hi = self.ranges[x]
            lo, hi = min(0.0, float(lo)), max(0.0, float(hi))  # as DynamicQuantizeLinear: the range holds 0
            scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
            zero = np.uint8(np.clip(np.round(-lo / scale), 0, 255))
            self.static_activations[x] = (self.constant("x_scale", np.array(scale, dtype=np.float32)),
                                          self.constant("x_zero", np.array(zero, dtype=np.uint8)), scale)
        return self.static_activations[x]

    def static_conv(self, node, w_name, w_zero, w_scale, bias, channel_shape):
        """QuantizeLinear with calibrated constants -> ConvInteger -> Cast -> Mul(x_scale * W_scale) [-> Add]."""
        x_scale, x_zero, x_scale_value = self.static_activation(node.input[0])
        x_q, acc, acc_f = self.name("x_u8"), self.name("acc_i32"), self.name("acc_f32")
        product = node.output[0] if bias is None else self.name("product")
        scale_all = self.constant(f"{node.name}_scale", (w_scale * x_scale_value).astype(np.float32))
        integer = helper.make_node("ConvInteger", [x_q, w_name, x_zero, w_zero], [acc], self.name("conv_int"))
        integer.attribute.extend(node.attribute)  # same pads/strides/dilations/group
        nodes = [
            helper.make_node("QuantizeLinear", [node.input[0], x_scale, x_zero], [x_q], self.name("ql")),
            integer,
            helper.make_node("Cast", [acc], [acc_f], self.name("cast"), to=TensorProto.FLOAT),
            helper.make_node("Mul", [acc_f, scale_all], [product], self.name("dequant")),
        ]
        if bias is not None:
            b_name = self.constant(f"{node.name}_bias", bias.reshape(channel_shape).astype(np.float32))
            nodes.append(helper.make_node("Add", [product, b_name], [node.output[0]], self.name("bias")))
        return nodes

    def rewrite_gather(self, node):
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        table = self.float_weight(node.input[0])
        if table is None or table.ndim != 2 or attrs.get("axis", 0) != 0:
            return None
        per_row = table.shape[1] >= MIN_ROW_SCALE_WIDTH
        scale = np.maximum(np.abs(table).max(axis=1 if per_row else 0, keepdims=True), 1e-12) / EMBEDDING_QMAX
        q_table = np.clip(np.round(table / scale), -EMBEDDING_QMAX, EMBEDDING_QMAX).astype(np.int8)
        t_name = self.constant(f"{node.name}_table", q_table)
        rows, rows_f = self.name("rows_i8"), self.name("rows_f32")
        nodes = [helper.make_node("Gather", [t_name, node.input[1]], [rows], self.name("gather_i8"), axis=0),
                 helper.make_node("Cast", [rows], [rows_f], self.name("cast"), to=TensorProto.FLOAT)]
        if per_row:  # [V, 1]: only the looked-up rows' scales are gathered
            s_name = self.constant(f"{node.name}_row_scale", scale.astype(np.float32))
            scales = self.name("row_scales")
            nodes.append(helper.make_node("Gather", [s_name, node.input[1]], [scales], self.name("gather_scale"), axis=0))
        else:  # [C]: broadcast over the gathered rows
            scales = self.constant(f"{node.name}_column_scale", scale.reshape(-1).astype(np.float32))
        nodes.append(helper.make_node("Mul", [rows_f, scales], [node.output[0]], self.name("dequant")))
        return nodes

    def run(self):
        handlers = {"Gemm": self.rewrite_gemm, "MatMul": self.rewrite_matmul, "Gather": self.rewrite_gather,
                    "Conv": self.rewrite_conv}
        nodes, counts = [], {}
        self.readers, self.folded = {}, set()
        self.graph_outputs = {o.name for o in self.graph.output}
        for node in self.graph.node:
            for name in node.input:
                self.readers.setdefault(name, []).append(node)
        for node in self.graph.node:
            if id(node) in self.folded:  # an Add already folded into the quantized product before it
                continue
            handler = handlers.get(node.op_type)
            replacement = handler(node) if handler else None
            if replacement is None:
                nodes.append(node)
            else:
                nodes.extend(replacement)
                counts[node.op_type] = counts.get(node.op_type, 0) + 1
        replace_nodes(self.graph, nodes, self.new_initializers, self.initializers)
        return counts


def ensure_opset(model, minimum):
    """DynamicQuantizeLinear/MatMulInteger need default-domain opset >= 11."""
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx") and opset.version < minimum:
            opset.version = minimum


def load_ranges(path, input_max, exact=False):
    """Calibrated [min, max] per activation; state-like ones (inside [-1, 1]) get exactly [-1, 1].
    With exact, every range is used as calibrated (e.g. a CNN's pixels in [0, 1] and ReLU outputs)."""
    ranges = {}
    for name, r in json.load(open(path))["ranges"].items():
        if exact:
            ranges[name] = (r["min"], r["max"])
            continue
        inside = -1.0 <= r["min"] and r["max"] <= 1.0
        ranges[name] = (-1.0, 1.0) if inside else (r["min"], max(input_max, r["max"]))
    return ranges


def probe(src, dst):
    """The model with every activation quantize_matmul would quantize as an extra output."""
    model = onnx.load(src)
    initializers = {t.name: t for t in model.graph.initializer}
    aliases = Rewriter(model).aliases
    outputs = {o.name for o in model.graph.output}
    for node in model.graph.node:
        weight = initializers.get(aliases.get(node.input[1], node.input[1])) if node.op_type in ("MatMul", "Gemm", "Conv") and len(node.input) > 1 else None
        if weight is not None and weight.data_type == TensorProto.FLOAT and node.input[0] not in outputs:
            model.graph.output.append(helper.make_tensor_value_info(node.input[0], TensorProto.FLOAT, None))
            outputs.add(node.input[0])
    onnx.save(model, dst)
    print(f"probe outputs: {len(model.graph.output) - 1} -> {dst}")


def main(src, dst, ranges=None):
    model = onnx.load(src)
    rewriter = Rewriter(model, ranges)
    counts = rewriter.run()
    ensure_opset(model, 11)
    if rewriter.static_activations:
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.checker.check_model(model)
    onnx.save(model, dst)
    ops = sorted({n.op_type for n in model.graph.node})
    static = f", {len(rewriter.static_activations)} activations static" if rewriter.static_activations else ""
    print(f"quantized {counts or 'nothing'}{static} -> {dst}")
    print(f"op types: {', '.join(ops)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="INT8 quantization of MatMul/Gemm/Conv/Gather weights")
    parser.add_argument("src")
    parser.add_argument("dst")
    parser.add_argument("--probe", action="store_true", help="write the calibration probe model instead")
    parser.add_argument("--calibration", help="activation ranges JSON: static activation quantization")
    parser.add_argument("--input-max", type=float, default=2.0)
    parser.add_argument("--exact-ranges", action="store_true", help="use calibrated ranges as they are")
    args = parser.parse_args()
    if args.probe:
        probe(args.src, args.dst)
    else:
        main(args.src, args.dst, load_ranges(args.calibration, args.input_max, args.exact_ranges) if args.calibration else None)
