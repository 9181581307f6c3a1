"""GATEBOT_ENCODER=onnx and onnx-float: the encoder's layers in ONNX Runtime, built from the same
safetensors; float weights give the numpy encoder's vectors, int8 weights vectors close to them."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (the onnx extra)")

from bot.heads import encoder as encoder_module
from bot.heads.encoder import MAX_SEQ_LENGTH, embed, load_encoder, shipped_path
from bot.heads.encoder_numpy import NumpyEncoder
from bot.heads.encoder_onnx import OnnxEncoder, quantize_columns
from tests.test_encoder_numpy import TEXTS


@pytest.fixture(scope="module")
def numpy_encoder() -> NumpyEncoder:
    return NumpyEncoder(shipped_path())


@pytest.mark.parametrize("limit", [MAX_SEQ_LENGTH, None])
def test_float_weights_give_the_numpy_vectors(numpy_encoder: NumpyEncoder, limit: int | None):
    onnx = OnnxEncoder(shipped_path(), quantize=False)
    a = embed(numpy_encoder, TEXTS, max_length=limit)
    b = embed(onnx, TEXTS, max_length=limit)
    assert b.shape == a.shape and b.dtype == np.float32
    assert float((a * b).sum(axis=1).min()) >= 0.9999


def test_int8_weights_stay_close_and_keep_unit_length(numpy_encoder: NumpyEncoder) -> None:
    onnx = OnnxEncoder(shipped_path())
    a, b = embed(numpy_encoder, TEXTS), embed(onnx, TEXTS)
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert float((a * b).sum(axis=1).min()) >= 0.95
    # The same text alone or among others: a message's vector never depends on its batch.
    alone = embed(onnx, [TEXTS[5]])[0]
    assert float(alone @ b[5]) >= 0.99999


def test_columns_are_quantised_symmetrically_each_with_its_scale() -> None:
    w = np.array([[1.0, -0.5, 0.0], [-2.0, 0.25, 0.0]], dtype=np.float32)
    q, scale = quantize_columns(w)
    assert q.dtype == np.int8 and q[1, 0] == -127 and q[0, 1] == -127
    assert np.allclose(q * scale, w, atol=float(scale.max()) / 2)
    assert scale[2] == 1.0 and not q[:, 2].any()  # an all-zero column stays zero


def test_the_setting_selects_the_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEBOT_ENCODER", "onnx")
    model = load_encoder()
    assert isinstance(model, OnnxEncoder) and model.quantized
    assert load_encoder() is model  # once per process
    monkeypatch.setenv("GATEBOT_ENCODER", "onnx-float")
    assert not load_encoder().quantized
    monkeypatch.setenv("GATEBOT_ENCODER", "onnx-int4")
    with pytest.raises(ValueError, match="GATEBOT_ENCODER"):
        encoder_module.backend()


def test_unset_the_backend_is_onnx_float_where_onnxruntime_imports_else_numpy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.delenv("GATEBOT_ENCODER", raising=False)
    encoder_module._default_backend.cache_clear()
    try:
        assert encoder_module.backend() == "onnx-float"  # numpy's vectors, never int8's
        monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed
        encoder_module._default_backend.cache_clear()
        assert encoder_module.backend() == "numpy"
    finally:
        monkeypatch.undo()
        encoder_module._default_backend.cache_clear()


def test_int8_passages_get_vectors_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    from gatebot_knowledge.embedder import load_embedder

    monkeypatch.setenv("GATEBOT_ENCODER", "onnx")
    int8 = load_embedder()
    heads_copy = load_encoder()
    monkeypatch.setenv("GATEBOT_ENCODER", "onnx-float")
    float_ = load_embedder()
    assert int8 is not None and float_ is not None
    assert "+int8" in int8.model_id and "+int8" not in float_.model_id
    assert int8.model is heads_copy  # the heads' copy, not a second one


def test_without_onnxruntime_the_heads_stand_down_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import sys

    from bot.packs import load_pack
    from bot.turn.reading import Readers
    from tests.test_encoder_numpy import ROOT

    monkeypatch.setenv("GATEBOT_ENCODER", "onnx")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed
    readers = Readers(load_pack(ROOT / "knowledge" / "acme"), use_heads=True)
    assert readers.intent_head is None and readers.sentiment_head is None
    assert "pip install 'gatebot[onnx]'" in caplog.text
