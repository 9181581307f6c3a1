"""Heads: small trained classifiers that answer with a calibrated confidence and may abstain.

A head reads one thing (intent, sentiment, the next move, ...) from text. It returns every label
with a probability; a head trained with a ``none`` class can say confidently that nothing it knows
is there. Its ``version`` is a hash of its files, so a pack can pin it and every turn names it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

NONE = "none"

__all__ = ["NONE", "Head", "load_head"]


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
