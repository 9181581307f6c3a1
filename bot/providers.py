"""The model provider base and the prompt/response pair every provider speaks.

A model only reads free text into proposals and words replies. It gets the turn's state rendered as
text (``system`` and ``messages``) and the same state structured (``context``), so an offline
provider can work from the structure and a language model from the text.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from bot.errors import ProviderError


@dataclass
class Prompt:
    purpose: str  # "reply", "values" or "intent"
    system: str
    messages: list[dict[str, str]]
    context: dict[str, Any] = field(default_factory=dict)


@dataclass
class Response:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0


class ModelProvider(ABC):
    """One model behind one API. ``execute`` raises :class:`bot.errors.ProviderError` on failure."""

    name: str = ""
    #: Whether it can read values out of free text (purpose "values", JSON out). The offline
    #: provider cannot; the deterministic extractors do that job for it.
    reads_values: bool = False

    def __init__(self, model: str = "") -> None:
        self.model = model

    @abstractmethod
    async def execute(self, prompt: Prompt) -> Response:
        """Run one prompt and return the model's text."""

    async def aclose(self) -> None:  # noqa: B027 (a no-op unless the provider holds a client)
        """Close clients and connection pools; the app awaits it when it stops."""


async def call(provider: ModelProvider, prompt: Prompt, calls: list[dict[str, Any]]) -> Response:
    """Run ``prompt`` and append what the turn record keeps of the call to ``calls``: provider,
    model, purpose, time and tokens, and the error when it failed (then re-raised)."""
    started = time.perf_counter()
    entry: dict[str, Any] = {
        "provider": provider.name,
        "model": provider.model,
        "purpose": prompt.purpose,
        "ms": 0.0,
        "tokens_in": 0,
        "tokens_out": 0,
    }
    calls.append(entry)
    try:
        response = await provider.execute(prompt)
    except ProviderError as exc:
        entry["error"] = str(exc)
        raise
    finally:
        entry["ms"] = round((time.perf_counter() - started) * 1000, 3)
    entry["tokens_in"], entry["tokens_out"] = response.tokens_in, response.tokens_out
    return response
