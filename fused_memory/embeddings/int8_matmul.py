"""Run an int8-weight ONNX model's matrix products on int8 kernels, weights unchanged.

Why: the shipped MiniLM stores each projection as int8 values and one scale per output column, and
its graph turns them back into float32 (`Cast` -> `Mul`) before a float `MatMul`. onnxruntime folds
that at load, so every query multiplies by 42 MB of float32 weights: more than this machine's 32 MB
L3, and for a query of ~8 tokens the product is bound by memory, not arithmetic (most of a query
embedding goes to `MatMul`: docs/decisions/0013-int8-embedder.md). Handing the same int8 values to onnxruntime's
`MatMulNBits` (8 bits, `accuracy_level` 4: int8 x int8 products) keeps the weights at 10.6 MB.

What changes and what does not:
* The weights are bit-identical: each int8 value `q` is stored as `q + 128` with the column's own
  scale in every block, which `MatMulNBits` reads back as exactly `scale * q`.
* The activations are quantized to int8 per row and per block of `block_size` values inside the
  kernel. That is the only numeric difference, small enough that the embedder id stays the same
  (`benchmarks/bench_embedder.py --activations int8 float`; docs/decisions/0013-int8-embedder.md).
  onnxruntime picks its int8 kernel per CPU, so another CPU may give slightly different vectors.

Only the `Cast(int8 initializer) -> Mul(per-column scale) -> MatMul(input B)` pattern is rewritten;
anything else in the graph (embedding lookups, norms, attention) is left alone, and a model without
the pattern comes back unchanged (`None`), so a custom model file still loads as it is. Weights that
are also graph inputs (overridable at run time) and graphs with subgraphs (If / Loop bodies that could
read a removed tensor) are left alone too.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

__all__ = ["rewrite_int8_matmuls", "DEFAULT_BLOCK_SIZE"]

#: Activation block along K: 64 keeps nearly all the speed of 128 at an error no larger than the
#: shipped weight quantization's own (docs/decisions/0013-int8-embedder.md).
DEFAULT_BLOCK_SIZE = 64


def rewrite_int8_matmuls(model_bytes: bytes, block_size: int = DEFAULT_BLOCK_SIZE) -> bytes | None:
    """The serialized model with each int8-weight `MatMul` as a `MatMulNBits`; None if none matched.

    Needs the `onnx` package (graph editing; onnxruntime has no graph API in Python)."""
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 16 \
            or block_size & (block_size - 1):
        raise ValueError(f"block_size must be a power of two >= 16, got {block_size}")
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load_from_string(model_bytes)
    graph = model.graph
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
           for node in graph.node for a in node.attribute):
        return None  # a body could read a tensor this rewrite removes; not worth following
    taken = {t.name for t in graph.initializer} | {v.name for v in graph.input} | \
        {out for node in graph.node for out in node.output} | {node.name for node in graph.node}
    overridable = {v.name for v in graph.input}
    inits = {t.name: t for t in graph.initializer if t.name not in overridable}
    producer = {out: node for node in graph.node for out in node.output}
    readers: dict[str, int] = defaultdict(int)
    for node in graph.node:
        for name in node.input:
            readers[name] += 1
    for out in graph.output:
        readers[out.name] += 1

    replaced: dict[int, Any] = {}
    dropped: set[int] = set()
    unused: set[str] = set()
    added: list[Any] = []
    packed_as: dict[tuple[str, str], tuple[str, str]] = {}  # one packed copy per (weight, scale)

    def fresh(name: str) -> str:
        out, i = name, 1
        while out in taken:
            out, i = f"{name}_{i}", i + 1
        taken.add(out)
        return out

    for node in graph.node:
        found = _int8_weight(node, producer, inits, readers)
        if found is None:
            continue
        cast, mul = found
        q = numpy_helper.to_array(inits[cast.input[0]])
        scale = numpy_helper.to_array(inits[mul.input[1]])
        k, n = q.shape
        if k % block_size:
            continue
        key = (cast.input[0], mul.input[1])
        if key not in packed_as:
            blocks = k // block_size
            packed = (q.astype(np.int16) + 128).astype(np.uint8).T.reshape(n, blocks, block_size)
            scales = np.repeat(scale.reshape(n, 1).astype(np.float32), blocks, axis=1)
            names = fresh(f"{cast.input[0]}__nbits8"), fresh(f"{cast.input[0]}__nbits8_scales")
            added += [numpy_helper.from_array(np.ascontiguousarray(packed), names[0]),
                      numpy_helper.from_array(np.ascontiguousarray(scales), names[1])]
            packed_as[key] = names
        weight, scales_name = packed_as[key]
        replaced[id(node)] = helper.make_node(
            "MatMulNBits", [node.input[0], weight, scales_name], list(node.output),
            name=fresh(f"{node.output[0]}__nbits8"), domain="com.microsoft",
            K=k, N=n, bits=8, block_size=block_size, accuracy_level=4)
        dropped |= {id(cast), id(mul)}
        unused |= {cast.input[0], mul.input[1]}
    if not replaced:
        return None

    nodes = [replaced.get(id(node), node) for node in graph.node if id(node) not in dropped]
    still_read = {name for node in nodes for name in node.input} | {out.name for out in graph.output}
    keep = [t for t in graph.initializer if t.name not in unused or t.name in still_read]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(keep + added)
    if not any(op.domain == "com.microsoft" for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return bytes(model.SerializeToString())


def _int8_weight(node: Any, producer: dict[str, Any], inits: dict[str, Any],
                 readers: dict[str, int]) -> tuple[Any, Any] | None:
    """(cast, mul) when `node` is a MatMul whose B is `Cast(int8 [K, N]) * scale[1, N]` read only here."""
    if node.op_type != "MatMul" or node.domain not in ("", "ai.onnx") or len(node.input) != 2:
        return None
    mul = producer.get(node.input[1])
    if mul is None or mul.op_type != "Mul" or readers[mul.output[0]] != 1 or mul.input[1] not in inits:
        return None
    cast = producer.get(mul.input[0])
    if cast is None or cast.op_type != "Cast" or cast.input[0] not in inits or readers[cast.output[0]] != 1:
        return None
    if mul.domain not in ("", "ai.onnx") or cast.domain not in ("", "ai.onnx"):
        return None
    if [a.i for a in cast.attribute if a.name == "to"] != [1]:  # Cast to FLOAT
        return None
    q, scale = inits[cast.input[0]], inits[mul.input[1]]
    int8, float32 = 3, 1  # onnx.TensorProto.INT8, FLOAT
    if q.data_type != int8 or len(q.dims) != 2 or scale.data_type != float32:
        return None
    if tuple(scale.dims) != (1, q.dims[1]):
        return None
    return cast, mul
