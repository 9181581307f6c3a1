"""The sentence encoder's forward pass in numpy: no torch at run time.

A sentence-transformers folder of a BERT model (the shipped all-MiniLM-L6-v2, or the ``encoder/``
folder a fine-tuned head carries) holds everything the pass needs: ``config.json`` (layer sizes),
``model.safetensors`` (weights, read with safetensors' numpy loader), ``tokenizer.json`` (read by
the ``tokenizers`` library, the same Rust tokenizer transformers' fast tokenizer runs) and the
pooling config. The pass is what sentence-transformers computes for this model: BERT (absolute
positions, token type 0, post-layer-norm, exact GELU), mean pooling over the attention mask, then
unit length. Measured against sentence-transformers in tests/test_encoder_numpy.py (cosine
>= 0.9999) and bench/encoder.py (speed).

The arrays are read-only after loading and every call works on its own buffers, so threads can
encode at once without a lock.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

#: Padded tokens per forward batch (see :func:`_batches`).
TOKENS_PER_BATCH = 512
#: Added to the attention scores of padding, as transformers does (the float32 minimum).
_MASKED = np.float32(np.finfo(np.float32).min)
#: Abramowitz and Stegun 7.1.26: erf to 1.5e-7, below float32's resolution of GELU's output.
_ERF_P = np.float32(0.3275911)
_ERF_A = [
    np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
]


def gelu_(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x), computed in place (the largest array of the pass: every
    temporary saved is a pass over memory saved). erf by Abramowitz and Stegun 7.1.26, since
    numpy has none and scipy is not a run-time dependency."""
    a = np.abs(x) * np.float32(1 / math.sqrt(2))  # |x| / sqrt(2)
    t = _ERF_P * a
    t += 1.0
    np.reciprocal(t, out=t)
    poly = _ERF_A[0] * t
    for coefficient in _ERF_A[1:]:
        poly += coefficient
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a  # 1 - erf(|x| / sqrt(2))
    # x * Phi(x) = x * (1 + sign(x) * erf(|x|/sqrt 2)) / 2; with e = 1 - erf: x >= 0 gives
    # x * (1 - e/2), x < 0 gives x * e/2.
    poly *= 0.5
    np.subtract(1.0, poly, out=poly, where=x >= 0)
    x *= poly
    return x


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """In place over ``x``."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.square(x).mean(axis=-1, keepdims=True)
    var += np.float32(eps)
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias
    return x


class _Layer:
    """One transformer layer's weights, transposed once so each step is ``x @ w + b``."""

    def __init__(self, w: dict[str, np.ndarray], prefix: str, heads: int) -> None:
        def get(name: str) -> np.ndarray:
            return np.ascontiguousarray(w[f"{prefix}.{name}"], dtype=np.float32)

        attention = "attention.self"
        # Query, key and value in one matrix: one matmul instead of three.
        self.qkv = np.ascontiguousarray(
            np.concatenate([get(f"{attention}.{n}.weight") for n in ("query", "key", "value")]).T
        )
        self.qkv_bias = np.concatenate(
            [get(f"{attention}.{n}.bias") for n in ("query", "key", "value")]
        )
        # Attention divides q.k by sqrt(head size): done once here, to q's weights and bias.
        dim = self.qkv.shape[0]
        scale = np.float32(1 / math.sqrt(dim // heads))
        self.qkv[:, :dim] *= scale
        self.qkv_bias[:dim] *= scale
        self.out = np.ascontiguousarray(get("attention.output.dense.weight").T)
        self.out_bias = get("attention.output.dense.bias")
        self.norm1 = (
            get("attention.output.LayerNorm.weight"),
            get("attention.output.LayerNorm.bias"),
        )
        self.up = np.ascontiguousarray(get("intermediate.dense.weight").T)
        self.up_bias = get("intermediate.dense.bias")
        self.down = np.ascontiguousarray(get("output.dense.weight").T)
        self.down_bias = get("output.dense.bias")
        self.norm2 = (get("output.LayerNorm.weight"), get("output.LayerNorm.bias"))


class NumpyEncoder:
    """A sentence-transformers BERT folder as a numpy function from texts to unit vectors.

    ``max_seq_length`` (word pieces, specials included) is the default truncation, as on a
    SentenceTransformer; :meth:`encode` takes another per call, so one copy of the weights serves
    the heads' short limit and knowledge search's longer one.
    """

    def __init__(self, folder: str | Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        root = Path(folder)
        self.folder = root
        config = json.loads((root / "config.json").read_text(encoding="utf-8"))
        _check_supported(root, config)
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        w = _strip_prefix(load_file(str(root / "model.safetensors")))
        self.words = w["embeddings.word_embeddings.weight"]
        self.positions = w["embeddings.position_embeddings.weight"]
        self.type0 = w["embeddings.token_type_embeddings.weight"][0]
        self.norm0 = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = [
            _Layer(w, f"encoder.layer.{i}", self.heads)
            for i in range(int(config["num_hidden_layers"]))
        ]
        self.dim = int(config["hidden_size"])
        #: The folder's own token limit (knowledge search's passages use it) and the default
        #: truncation of :meth:`encode` (the heads set theirs, as on a SentenceTransformer).
        self.folder_max_length = _configured_length(root, int(config["max_position_embeddings"]))
        self.max_seq_length = self.folder_max_length
        self._tokenizer_json = (root / "tokenizer.json").read_text(encoding="utf-8")
        Tokenizer.from_str(self._tokenizer_json)  # a broken tokenizer fails here, at load
        self._tokenizers: dict[int, Any] = {}  # one per token limit, made on first use

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    def token_ids(self, texts: list[str], max_length: int | None = None) -> list[list[int]]:
        """Each text's word-piece ids, [CLS] and [SEP] included, cut at ``max_length``."""
        tokenizer = self._tokenizer(max_length or self.max_seq_length)
        # sentence-transformers strips each text before tokenising; so do we.
        return [e.ids for e in tokenizer.encode_batch([t.strip() for t in texts])]

    def _tokenizer(self, limit: int) -> Any:
        """The tokenizer truncating at ``limit``: a copy per limit, so no call ever changes the
        truncation of one another thread is using."""
        tokenizer = self._tokenizers.get(limit)
        if tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_str(self._tokenizer_json)
            tokenizer.no_padding()
            tokenizer.enable_truncation(limit)
            self._tokenizers[limit] = tokenizer
        return tokenizer

    def encode(
        self, texts: list[str], batch_size: int = 64, max_length: int | None = None
    ) -> np.ndarray:
        """Unit-length float32 rows, one per text, in the order given."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = self.token_ids(texts, max_length)
        # Texts of like length together, as sentence-transformers does: batches pad little.
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        for rows in _batches(order, [len(ids[i]) for i in order], batch_size):
            out[rows] = self._forward([ids[i] for i in rows])
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for i, row in enumerate(batch):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1.0
        x = self.words[ids] + self.positions[:length] + self.type0
        x = layer_norm(x, *self.norm0, self.eps)
        scores_mask = ((1.0 - mask) * _MASKED)[:, None, None, :]
        for layer in self.layers:
            x = self._layer(layer, x, scores_mask)
        summed = (x * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)

    def _layer(self, layer: _Layer, x: np.ndarray, scores_mask: np.ndarray) -> np.ndarray:
        batch, length, dim = x.shape
        head_dim = dim // self.heads
        qkv = x @ layer.qkv
        qkv += layer.qkv_bias
        q, k, v = (
            qkv.reshape(batch, length, 3, self.heads, head_dim)[:, :, i].transpose(0, 2, 1, 3)
            for i in range(3)
        )
        scores = q @ k.transpose(0, 1, 3, 2)  # q is scaled by 1/sqrt(head_dim) in its weights
        scores += scores_mask
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, dim)
        attended = context @ layer.out
        attended += layer.out_bias
        attended += x
        x = layer_norm(attended, *layer.norm1, self.eps)
        hidden = x @ layer.up
        hidden += layer.up_bias
        out = gelu_(hidden) @ layer.down
        out += layer.down_bias
        out += x
        return layer_norm(out, *layer.norm2, self.eps)


def _batches(order: list[int], lengths: list[int], batch_size: int) -> list[list[int]]:
    """``order`` (sorted by length) cut into batches of at most ``batch_size`` texts and
    :data:`TOKENS_PER_BATCH` padded tokens. The pass is bound by memory, not arithmetic: 64
    passages of 256 word pieces would make attention scores of 200 MB, and 32 tweets at once cost
    15 ms of CPU each where batches of 512 tokens cost 10.5 (bench/encoder.py's tweets)."""
    batches: list[list[int]] = []
    current: list[int] = []
    for i, length in zip(order, lengths, strict=True):
        if current and (
            len(current) >= batch_size or (len(current) + 1) * length > TOKENS_PER_BATCH
        ):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def _strip_prefix(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """BertModel's names: a checkpoint saved from a wrapper prefixes them with ``bert.``."""
    return {k.removeprefix("bert."): v for k, v in weights.items()}


def _check_supported(root: Path, config: dict[str, Any]) -> None:
    """Refuse what this pass does not compute, rather than return wrong vectors quietly."""
    if config.get("model_type") != "bert":
        raise ValueError(f"{root}: model_type {config.get('model_type')!r}, not bert")
    if config.get("hidden_act", "gelu") != "gelu":
        raise ValueError(f"{root}: activation {config.get('hidden_act')!r}, not gelu")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"{root}: position embeddings are not absolute")
    pooling = root / "1_Pooling" / "config.json"
    if pooling.is_file():
        modes = json.loads(pooling.read_text(encoding="utf-8"))
        # sentence-transformers 6 writes "pooling_mode": "mean"; earlier ones a flag per mode.
        named = modes.get("pooling_mode")
        flags = [k for k, on in modes.items() if k.startswith("pooling_mode_") and on is True]
        if (named or flags) not in ("mean", ["pooling_mode_mean_tokens"]):
            raise ValueError(f"{root}: pooling {named or flags}, not mean tokens")


def _configured_length(root: Path, positions: int) -> int:
    """The folder's own token limit, as sentence-transformers reads it: ``max_seq_length`` in
    ``sentence_bert_config.json`` (up to version 5), else the tokenizer's ``model_max_length``
    (version 6 saves it there); the model's position count when neither names one."""
    for name, key in (
        ("sentence_bert_config.json", "max_seq_length"),
        ("tokenizer_config.json", "model_max_length"),
    ):
        config = root / name
        if config.is_file():
            limit = json.loads(config.read_text(encoding="utf-8")).get(key)
            if isinstance(limit, int) and limit > 0:
                return min(limit, positions)
    return positions
