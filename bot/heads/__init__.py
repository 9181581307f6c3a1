"""Heads: small trained classifiers that answer with a calibrated confidence and may abstain.

A head reads one thing (intent, sentiment, the next move, ...) from text. It returns every label
with a probability; a head trained with a ``none`` class can say confidently that nothing it knows
is there. Its ``version`` is a hash of its files, so a pack can pin it and every turn names it.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from pathlib import Path

NONE = "none"

__all__ = ["NONE", "Head", "content_version", "load_head"]


def content_version(path: Path, name: str) -> str:
    """``NAME@<12 hex>`` over the folder's files (hidden files and caches skipped). Here, away
    from the training code, so a pack can check a pin without importing torch."""
    digest = hashlib.sha256()
    files = sorted(
        p
        for p in path.rglob("*")
        if p.is_file()
        and not any(
            part.startswith(".") or part == "__pycache__" for part in p.relative_to(path).parts
        )
    )
    for file in files:
        digest.update(file.relative_to(path).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return f"{name}@{digest.hexdigest()[:12]}"


class Head(ABC):
    #: What it reads: "intent", "sentiment", "move", or a pack's own head name.
    name: str = ""
    #: "NAME@HASH": the content hash of the head's files.
    version: str = ""
    labels: list[str] = []

    @abstractmethod
    def predict(self, texts: list[str]) -> list[list[tuple[str, float]]]:
        """For each text, every label with its calibrated probability, most likely first.

        CPU-bound and synchronous; the agent runs it off the event loop.
        """


def load_head(path: str | Path) -> Head:
    """The head saved in folder ``path`` (see :mod:`bot.heads.trained`). Never touches the network.

    Imported lazily so ``bot.heads`` stays importable without the ``ml`` extra installed.
    """
    from bot.heads.trained import load_trained

    return load_trained(path)
