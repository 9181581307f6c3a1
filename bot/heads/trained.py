"""A trained head on disk and in memory: a softmax layer (and temperature) over sentence embeddings,
and what it needs to tell a novel message (:mod:`bot.heads.novelty`).

A head folder holds ``config.json`` (labels, temperature, which encoder, the novelty threshold),
``head.safetensors`` (the layer's weight and bias, and the novelty bank: the training lines'
embeddings in float16) and, only when the encoder was fine-tuned, an ``encoder/`` folder.
The version is ``NAME@`` and 12 hex of a SHA-256 over every file's path and bytes, so any change
to any file gives a new version and an unchanged copy keeps it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from bot.heads import NONE, Head, content_version
from bot.heads.encoder import SHIPPED, embed, load_encoder, require_backend, shipped_version
from bot.heads.linear import softmax
from bot.heads.novelty import Novelty

FORMAT = "gatebot-head/1"
CONFIG, WEIGHTS, ENCODER_DIR = "config.json", "head.safetensors", "encoder"
BANK = "novelty_bank"


class TrainedHead(Head):
    """Softmax over (optionally fine-tuned) MiniLM embeddings, divided by a fitted temperature."""

    def __init__(
        self,
        name: str,
        labels: list[str],
        weight: np.ndarray,
        bias: np.ndarray,
        temperature: float = 1.0,
        encoder_path: Path | None = None,
        version: str = "",
        novelty: Novelty | None = None,
    ) -> None:
        if weight.shape[0] != len(labels) or bias.shape != (len(labels),):
            raise ValueError(f"weights for {weight.shape[0]} labels, but {len(labels)} labels")
        self.name, self.labels, self.version = name, list(labels), version
        self.weight = np.asarray(weight, dtype=np.float32)
        self.bias = np.asarray(bias, dtype=np.float32)
        self.temperature = float(temperature)
        self.encoder_path = encoder_path  # None: the shipped encoder
        self.novelty = novelty  # None: a head saved before novelty, never says "novel"

    @property
    def has_none(self) -> bool:
        return NONE in self.labels

    def probabilities(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """[len(texts), len(labels)] calibrated probabilities, in ``labels`` order."""
        if not texts:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        return self.probabilities_of(embed(load_encoder(self.encoder_path), texts, batch_size))

    def probabilities_of(self, x: np.ndarray) -> np.ndarray:
        """The same from embeddings already made by this head's encoder."""
        return softmax((x @ self.weight.T + self.bias) / self.temperature)

    def predict(self, texts: list[str]) -> list[list[tuple[str, float]]]:
        return self.ranked(self.probabilities(texts))

    def predict_embedded(self, x: np.ndarray) -> list[list[tuple[str, float]]]:
        """:meth:`predict` for embeddings from the shipped encoder (``encoder_path`` None), so
        several heads can share one embedding of a message."""
        return self.ranked(self.probabilities_of(x))

    def novel(self, texts: list[str]) -> list[bool]:
        """For each text, whether it is farther from every training line than the head allows."""
        if self.novelty is None or not texts:
            return [False] * len(texts)
        return self.novel_embedded(embed(load_encoder(self.encoder_path), texts))

    def novel_embedded(self, x: np.ndarray) -> list[bool]:
        """:meth:`novel` for embeddings already made by this head's encoder."""
        if self.novelty is None:
            return [False] * len(x)
        return [bool(v) for v in self.novelty.novel(x)]

    def read(self, texts: list[str]) -> tuple[list[list[tuple[str, float]]], list[bool]]:
        """:meth:`predict` and :meth:`novel` from one embedding of ``texts``."""
        if not texts:
            return [], []
        x = embed(load_encoder(self.encoder_path), texts)
        return self.ranked(self.probabilities_of(x)), self.novel_embedded(x)

    def ranked(self, probs: np.ndarray) -> list[list[tuple[str, float]]]:
        order = np.argsort(-probs, axis=1, kind="stable")
        return [
            [(self.labels[j], float(row[j])) for j in idx]
            for row, idx in zip(probs, order, strict=True)
        ]

    def save(self, path: str | Path, encoder: Any = None) -> str:
        """Write the head (and a fine-tuned ``encoder``, if given) to ``path``; return the version.

        Stale files from an earlier head in the same folder are removed first, since every file
        there counts towards the version.
        """
        from safetensors.numpy import save_file

        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        for old in (root / CONFIG, root / WEIGHTS):
            old.unlink(missing_ok=True)
        if encoder is not None:
            encoder.save(str(root / ENCODER_DIR))
            self.encoder_path = root / ENCODER_DIR
        elif (root / ENCODER_DIR).exists():
            import shutil

            shutil.rmtree(root / ENCODER_DIR)
        config = {
            "format": FORMAT,
            "name": self.name,
            "labels": self.labels,
            "temperature": round(self.temperature, 6),
            "encoder": ENCODER_DIR if self.encoder_path is not None else SHIPPED,
            "encoder_version": shipped_version(),
        }
        tensors = {"weight": self.weight, "bias": self.bias}
        if self.novelty is not None:
            config["novelty"] = {
                "k": self.novelty.k,
                "threshold": round(self.novelty.threshold, 6),
                **({"fitted": self.novelty.fitted} if self.novelty.fitted else {}),
            }
            tensors[BANK] = self.novelty.bank
        (root / CONFIG).write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
        save_file(tensors, str(root / WEIGHTS))
        (root / WEIGHTS).chmod(0o644)  # safetensors writes 0600; the head ships in a package
        self.version = content_version(root, self.name)
        return self.version


def load_trained(path: str | Path) -> TrainedHead:
    """Read a head folder written by :meth:`TrainedHead.save`. Never touches the network."""
    from safetensors.numpy import load_file

    require_backend()  # a backend that cannot load fails here, once, not on every message
    root = Path(path)
    config_file = root / CONFIG
    if not config_file.is_file():
        raise FileNotFoundError(f"{root}: not a head folder (no {CONFIG})")
    config = json.loads(config_file.read_text(encoding="utf-8"))
    if config.get("format") != FORMAT:
        raise ValueError(f"{root}: unknown head format {config.get('format')!r}")
    tensors = load_file(str(root / WEIGHTS))
    encoder = root / ENCODER_DIR if config.get("encoder") == ENCODER_DIR else None
    novelty = None
    if "novelty" in config and BANK in tensors:
        conf = config["novelty"]
        novelty = Novelty(tensors[BANK], conf["threshold"], conf["k"], conf.get("fitted", {}))
    return TrainedHead(
        name=config["name"],
        labels=config["labels"],
        weight=tensors["weight"],
        bias=tensors["bias"],
        temperature=config.get("temperature", 1.0),
        encoder_path=encoder,
        version=content_version(root, config["name"]),
        novelty=novelty,
    )
