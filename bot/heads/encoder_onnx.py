"""The encoder's transformer layers in ONNX Runtime, weights int8 (``GATEBOT_ENCODER=onnx``).

Built in memory from the same safetensors the numpy encoder reads, at load, in about a second: no
torch, no export step, no file written. Everything around the layers stays the numpy encoder's
(:class:`bot.heads.encoder_numpy.NumpyEncoder`): the tokenizer, truncation, batching by length,
the embeddings' lookup, mean pooling and unit length. The layers are the numpy pass's, node for
node (LayerNorm, exact GELU, softmax attention), except the six weight matrix products per layer:
each weight matrix is quantised to int8 once, symmetric, one scale per output column, and
multiplied by ORT's ``DynamicQuantizeMatMul`` (the activations quantised to uint8 per call, so
each text runs alone: see :meth:`OnnxEncoder._forward`). That product is where the pass spends
its time, and int8 costs it far less CPU; the vectors move a little (cosine about 0.99 with the
float ones), so the heads' reads agree with the numpy encoder's on most texts, not all (README:
The encoder). Attention's own products stay float32. ``quantize=False`` (``onnx-float``) keeps
the weights float32: the numpy encoder's vectors (cosine >= 0.9999), batched, at about half its
CPU.

One ORT thread per call, as the numpy encoder's one BLAS thread: concurrent turns already embed on
several threads, and a session is safe to run from many threads at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from bot.heads.encoder_numpy import NumpyEncoder, _Layer

#: Weight columns are scaled so the largest magnitude is this (symmetric int8, zero point 0).
INT8_MAX = 127.0
OPSET = 17  # LayerNormalization
CONTRIB = "com.microsoft"  # DynamicQuantizeMatMul and Gelu (exact erf) live there


class OnnxEncoder(NumpyEncoder):
    """:class:`NumpyEncoder` whose transformer layers run in ONNX Runtime with int8 weights."""

    def __init__(self, folder: str | Path, quantize: bool = True) -> None:
        super().__init__(folder)
        self.quantized = quantize
        model = build_graph(self.layers, self.norm0, self.heads, self.eps, quantize)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        self.layers = []  # the float copies live in the session now

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        if self.quantized and len(batch) > 1:
            # One text per pass: the activations' int8 scale is taken over the whole input, so
            # in a batch a text's vector would depend on the texts beside it (cosine 0.995
            # alone against batched). Alone, a message reads the same whatever arrives with it.
            return np.concatenate([self._forward([ids]) for ids in batch])
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for i, row in enumerate(batch):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1.0
        x = self.words[ids] + self.positions[:length] + self.type0
        scores_mask = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        (x,) = self.session.run(["last"], {"embedded": x, "scores_mask": scores_mask})
        summed = (x * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, np.float32(1e-12)), dtype=np.float32)


def quantize_columns(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 matrix, float32 scale per column): ``w ~= q * scale``, symmetric, per column."""
    peak = np.abs(w).max(axis=0)
    scale = np.where(peak > 0, peak / INT8_MAX, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale), -INT8_MAX, INT8_MAX).astype(np.int8)
    return q, scale


class _Graph:
    """Nodes and initializers being collected, with fresh names."""

    def __init__(self, quantize: bool) -> None:
        self.nodes: list[Any] = []
        self.weights: list[Any] = []
        self.quantize = quantize
        self._n = 0

    def name(self, stem: str) -> str:
        self._n += 1
        return f"{stem}_{self._n}"

    def const(self, value: np.ndarray, stem: str = "w") -> str:
        name = self.name(stem)
        self.weights.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, kind: str, inputs: list[str], domain: str = "", **attrs: Any) -> str:
        out = self.name(kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [out], domain=domain or None, **attrs))
        return out

    def dense(self, x: str, w: np.ndarray, bias: np.ndarray) -> str:
        """``x @ w + bias``: int8 weights through DynamicQuantizeMatMul, or float MatMul."""
        if self.quantize:
            q, scale = quantize_columns(w)
            inputs = [x, self.const(q), self.const(scale), "", self.const(bias)]
            return self.op("DynamicQuantizeMatMul", inputs, domain=CONTRIB)
        return self.op("Add", [self.op("MatMul", [x, self.const(w)]), self.const(bias)])

    def norm(self, x: str, weight: np.ndarray, bias: np.ndarray, eps: float) -> str:
        inputs = [x, self.const(weight), self.const(bias)]
        return self.op("LayerNormalization", inputs, axis=-1, epsilon=eps)


def build_graph(
    layers: list[_Layer],
    norm0: tuple[np.ndarray, np.ndarray],
    heads: int,
    eps: float,
    quantize: bool = True,
) -> Any:
    """The ONNX model: ``embedded`` [batch, length, dim] (word + position + type embeddings) and
    ``scores_mask`` [batch, 1, 1, length] (0, or float32's minimum on padding) to ``last``, the
    last layer's hidden states, as :meth:`NumpyEncoder._forward` computes them."""
    g = _Graph(quantize)
    x = g.norm("embedded", norm0[0], norm0[1], eps)
    for layer in layers:
        x = _layer(g, layer, x, heads, eps)
    g.nodes.append(helper.make_node("Identity", [x], ["last"]))
    dims: list[str | int | None] = ["batch", "length", int(layers[0].out.shape[0])]
    graph = helper.make_graph(
        g.nodes,
        "minilm_layers",
        [
            helper.make_tensor_value_info("embedded", TensorProto.FLOAT, dims),
            helper.make_tensor_value_info(
                "scores_mask", TensorProto.FLOAT, ["batch", 1, 1, "length"]
            ),
        ],
        [helper.make_tensor_value_info("last", TensorProto.FLOAT, dims)],
        g.weights,
    )
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid(CONTRIB, 1)]
    return helper.make_model(graph, opset_imports=opsets, producer_name="gatebot")


def _layer(g: _Graph, layer: _Layer, x: str, heads: int, eps: float) -> str:
    dim = layer.out.shape[0]
    head_dim = dim // heads
    split = g.const(np.array([0, 0, heads, head_dim], dtype=np.int64), "shape")
    merged = g.const(np.array([0, 0, dim], dtype=np.int64), "shape")

    def project(part: int, perm: list[int]) -> str:
        cols = slice(part * dim, (part + 1) * dim)  # q's columns carry 1/sqrt(head_dim) already
        y = g.dense(x, layer.qkv[:, cols], layer.qkv_bias[cols])
        return g.op("Transpose", [g.op("Reshape", [y, split])], perm=perm)

    q, k, v = project(0, [0, 2, 1, 3]), project(1, [0, 2, 3, 1]), project(2, [0, 2, 1, 3])
    scores = g.op("Add", [g.op("MatMul", [q, k]), "scores_mask"])
    context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
    context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), merged])
    attended = g.op("Add", [g.dense(context, layer.out, layer.out_bias), x])
    x = g.norm(attended, *layer.norm1, eps)
    hidden = g.op("Gelu", [g.dense(x, layer.up, layer.up_bias)], domain=CONTRIB)
    out = g.op("Add", [g.dense(hidden, layer.down, layer.down_bias), x])
    return g.norm(out, *layer.norm2, eps)
