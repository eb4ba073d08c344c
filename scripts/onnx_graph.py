"""Graph clean-up shared by the ONNX rewriting scripts (quantize.py, unroll-rnn.py)."""


def replace_nodes(graph, nodes, new_initializers, original_initializers):
    """Ends a rewrite: the graph gets the rewritten node list and the new initializers, then
    everything left unused is pruned (see prune)."""
    graph.ClearField("node")
    graph.node.extend(nodes)
    graph.initializer.extend(new_initializers)
    prune(graph, original_initializers)


def prune(graph, original_initializers):
    """Drops what a rewrite left unused: nodes none of whose outputs is read, initializers nobody
    reads, graph inputs that merely mirrored removed initializers (older exporters list
    initializers as inputs too), and value_info of tensors no node produces any more.

    original_initializers: names of the initializers before the rewrite."""
    outputs = {o.name for o in graph.output}
    while True:
        used = {name for node in graph.node for name in node.input} | outputs
        live = [n for n in graph.node if any(o in used for o in n.output)]
        if len(live) == len(graph.node):
            break
        graph.ClearField("node")
        graph.node.extend(live)
    kept = [t for t in graph.initializer if t.name in used]
    graph.ClearField("initializer")
    graph.initializer.extend(kept)
    kept_names = {t.name for t in kept}
    inputs = [i for i in graph.input if i.name in used or i.name not in original_initializers or i.name in kept_names]
    graph.ClearField("input")
    graph.input.extend(inputs)
    produced = {name for node in graph.node for name in node.output}
    infos = [v for v in graph.value_info if v.name in produced]
    graph.ClearField("value_info")
    graph.value_info.extend(infos)
