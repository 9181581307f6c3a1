"""The model provider base and the prompt/response pair every provider speaks.

A model only reads free text into proposals and words replies. It gets the turn's state rendered as
text (``system`` and ``messages``) and the same state structured (``context``), so an offline
provider can work from the structure and a language model from the text.

Tool calling, for the bounded loops in :mod:`bot.turn.toolloop`: a prompt offers ``tools`` (each
``{"name", "description", "schema"}``, as :meth:`bot.extend.tool.Tool.describe` gives them); a
response
may carry ``tool_calls``. The exchange so far travels in ``messages`` after the transcript, in one
neutral form that each provider renders in its API's shape:

- ``{"role": "assistant", "content": text, "tool_calls": [{"id", "name", "arguments"}]}``
- ``{"role": "tool", "tool_call_id", "name", "content": text, "is_error": bool}``

The model only proposes calls: every one runs through :class:`bot.extend.tool.ToolRunner`'s checks.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from bot.errors import ProviderError


class RecordedResponse(TypedDict):
    """A model's answer as the record keeps it, enough to hand the same answer back on replay."""

    text: str
    tool_calls: list[dict[str, Any]]


# The functional form keeps ``NotRequired`` real at run time under ``from __future__ import
# annotations`` (the record's schema, bot/turn/schema.py, reads it).
#: What the turn record keeps of one model call (:func:`call` writes it); ``error`` says why it
#: failed, the call being recorded all the same.
ModelCall = TypedDict(  # noqa: UP013
    "ModelCall",
    {
        "provider": str,
        "model": str,
        "purpose": str,
        "ms": float,
        "tokens_in": int,
        "tokens_out": int,
        "error": NotRequired[str],
        # For ``gatebot replay`` to reuse the call: the digest of everything the provider was
        # given (:func:`prompt_digest`), so a changed prompt is told from the same one ...
        "prompt_sha256": NotRequired[str],
        "response": NotRequired[RecordedResponse],  # ... and what the model answered
    },
)


@dataclass
class ToolCall:
    """One call a model asked for. ``arguments`` is a dict when the model sent a JSON object;
    anything else (unparseable JSON, a list) is kept as sent, and the tool runner refuses it."""

    id: str
    name: str
    arguments: Any

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass
class Prompt:
    purpose: str  # "reply", "values" or "intent"
    system: str
    #: The transcript (``{"role", "content"}``), then any tool exchange (see the module docstring).
    messages: list[dict[str, Any]]
    context: dict[str, Any] = field(default_factory=dict)
    #: Tools the model may call: ``{"name", "description", "schema"}`` each. Empty: no tools.
    tools: list[dict[str, Any]] = field(default_factory=list)
    #: ``auto`` (the model may call a tool) or ``none`` (it must answer in text; the tools stay
    #: described because the APIs refuse an exchange that names tools no longer defined).
    tool_choice: str = "auto"


@dataclass
class Response:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    tool_calls: list[ToolCall] = field(default_factory=list)


class ModelProvider(ABC):
    """One model behind one API. ``execute`` raises :class:`bot.errors.ProviderError` on failure."""

    name: str = ""
    #: Whether it can read values out of free text (purpose "values", JSON out). The offline
    #: provider cannot; the deterministic extractors do that job for it.
    reads_values: bool = False
    #: Whether it honours ``Prompt.tools`` (answers with ``tool_calls``). A provider that does not
    #: is handed the facts instead, found by one search the runtime makes for it.
    calls_tools: bool = False

    def __init__(self, model: str = "") -> None:
        self.model = model

    @abstractmethod
    async def execute(self, prompt: Prompt) -> Response:
        """Run one prompt and return the model's text."""

    async def aclose(self) -> None:  # noqa: B027 (a no-op unless the provider holds a client)
        """Close clients and connection pools; the app awaits it when it stops."""


async def call(provider: ModelProvider, prompt: Prompt, calls: list[ModelCall]) -> Response:
    """Run ``prompt`` and append what the turn record keeps of the call to ``calls``: provider,
    model, purpose, time and tokens, and the error when it failed (then re-raised)."""
    started = time.perf_counter()
    entry: ModelCall = {
        "provider": provider.name,
        "model": provider.model,
        "purpose": prompt.purpose,
        "ms": 0.0,
        "tokens_in": 0,
        "tokens_out": 0,
    }
    entry["prompt_sha256"] = prompt_digest(prompt)
    calls.append(entry)
    try:
        response = await provider.execute(prompt)
    except ProviderError as exc:
        entry["error"] = str(exc)
        raise
    finally:
        entry["ms"] = round((time.perf_counter() - started) * 1000, 3)
    entry["tokens_in"], entry["tokens_out"] = response.tokens_in, response.tokens_out
    entry["response"] = {
        "text": response.text,
        "tool_calls": [c.as_dict() for c in response.tool_calls],
    }
    return response


def prompt_digest(prompt: Prompt) -> str:
    """A digest of everything a provider is given (the text and the structure, tools included),
    so a replay can tell a prompt that is word for word the same from one that changed."""
    body = {
        "purpose": prompt.purpose,
        "system": prompt.system,
        "messages": prompt.messages,
        "context": prompt.context,
        "tools": prompt.tools,
        "tool_choice": prompt.tool_choice,
    }
    try:
        text = json.dumps(body, sort_keys=True, ensure_ascii=False, default=_plain)
    except (TypeError, ValueError):  # keys JSON cannot sort: the digest must never fail a turn
        text = repr(body)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plain(value: Any) -> Any:
    """A stable stand-in for what JSON cannot hold (never an object's address)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset):
        return sorted(map(str, value))
    return type(value).__name__


def assistant_turn(text: str, calls: list[ToolCall]) -> dict[str, Any]:
    """The model's tool-calling turn as it goes back into ``messages``."""
    return {"role": "assistant", "content": text, "tool_calls": [c.as_dict() for c in calls]}


def tool_result(call: ToolCall, content: str, is_error: bool = False) -> dict[str, Any]:
    """What a tool call came to, as it goes back into ``messages``."""
    return {
        "role": "tool",
        "tool_call_id": call.id,
        "name": call.name,
        "content": content,
        "is_error": is_error,
    }


def split_exchange(
    messages: list[dict[str, Any]],
) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """The transcript (plain lines, which providers normalise) and the tool exchange from its
    first tool turn on (kept exactly as it is: ids must pair calls with results)."""
    for i, message in enumerate(messages):
        if message.get("role") == "tool" or message.get("tool_calls"):
            return messages[:i], messages[i:]
    return messages, []


_WIRE_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def wire_names(tools: list[dict[str, Any]]) -> dict[str, str]:
    """Our tool names (``knowledge.search``) by the names the APIs accept (letters, digits, ``_``
    and ``-``, at most 64): ``{"knowledge_search": "knowledge.search"}``."""
    out: dict[str, str] = {}
    for tool in tools:
        wire = wire_name(tool["name"])
        if wire in out:
            clash = f"{out[wire]!r} and {tool['name']!r}"
            raise ValueError(f"tools {clash} share the wire name {wire!r}")
        out[wire] = tool["name"]
    return out


def wire_name(name: str) -> str:
    return _WIRE_UNSAFE.sub("_", name)[:64]
