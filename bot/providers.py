"""The model provider base and the prompt/response pair every provider speaks.

A model only reads free text into proposals and words replies. It gets the turn's state rendered as
text (``system`` and ``messages``) and the same state structured (``context``), so an offline
provider can work from the structure and a language model from the text.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any


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

    def __init__(self, model: str = "") -> None:
        self.model = model

    @abstractmethod
    async def execute(self, prompt: Prompt) -> Response:
        """Run one prompt and return the model's text."""
