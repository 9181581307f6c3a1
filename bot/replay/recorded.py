"""What a replay hands back instead of acting: recorded tool results and recorded model answers.

A :class:`Book` holds one logged conversation's recorded tool calls and model calls. During the
replay every tool is a :class:`RecordedTool`: it passes every check of the tool runner as the
real one would (schema, ownership, confirmation), but its ``run`` never calls out: it returns the
result the log holds for the same call (same tool, same arguments), and a call the log lacks is
noted as "would call" and fails. Model calls go through :class:`RecordedModel`: a prompt that is
word for word the one logged gets the logged answer; any other is noted as "model changed" and
goes to the configured provider (the offline provider just runs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bot.extend.provider import ModelProvider, Prompt, Response, ToolCall, prompt_digest
from bot.extend.tool import RECORDED_CALL, Tool, ToolError

#: The reason a replayed call fails when the log has no result for it.
WOULD_CALL = "replay: the log has no such call; it would call the tool"


def _key(tool: str, arguments: Any) -> str:
    return tool + " " + json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


@dataclass
class RecordedCall:
    tool: str
    arguments: Any
    result: dict[str, Any] | None  # None: the call failed, for ``reason``
    reason: str | None
    used: bool = False


@dataclass
class Book:
    """One conversation's recorded calls, and what the replay of its current turn noted."""

    tools: list[RecordedCall] = field(default_factory=list)
    models: list[dict[str, Any]] = field(default_factory=list)
    would_call: list[dict[str, Any]] = field(default_factory=list)
    model_changed: list[str] = field(default_factory=list)

    def load(self, turns: list[dict[str, Any]]) -> None:
        """Hold the calls of these turns (one conversation's) instead of the last ones."""
        book = self
        book.tools, book.models = [], []
        for record in turns:
            for event in record.get("tools") or []:
                kept = (event.get("detail") or {}).get(RECORDED_CALL)
                if event.get("event") in ("finished", "failed") and isinstance(kept, dict):
                    reason = None if event["event"] == "finished" else event["detail"].get("reason")
                    book.tools.append(
                        RecordedCall(
                            event["tool"], kept.get("arguments"), kept.get("result"), reason
                        )
                    )
            book.models.extend(c for c in record.get("model_calls") or [] if "prompt_sha256" in c)

    def begin_turn(self) -> None:
        self.would_call, self.model_changed = [], []

    def take_tool(self, tool: str, arguments: Any) -> RecordedCall | None:
        """The first unused recorded call of ``tool`` with these arguments, marked used."""
        key = _key(tool, arguments)
        for call in self.tools:
            if not call.used and _key(call.tool, call.arguments) == key:
                call.used = True
                return call
        self.would_call.append({"tool": tool, "arguments": arguments})
        return None

    def take_model(self, purpose: str, digest: str) -> dict[str, Any] | None:
        """The recorded answer to the same prompt, used once; None (noted) when there is none."""
        for n, call in enumerate(self.models):
            same = call.get("purpose") == purpose and call.get("prompt_sha256") == digest
            if same and isinstance(call.get("response"), dict):
                return self.models.pop(n)
        self.model_changed.append(purpose)
        return None


class RecordedTool(Tool):
    """A tool as the runner sees it (name, schema, flags, its own checks), run from the log."""

    def __init__(self, inner: Tool, book: Book) -> None:
        self.inner, self.book = inner, book
        self.name, self.description = inner.name, inner.description
        self.schema, self.result_schema = inner.schema, inner.result_schema
        self.changes, self.repeat, self.recorded = inner.changes, inner.repeat, inner.recorded
        self.ownership, self.filled, self.timeout_s = inner.ownership, inner.filled, inner.timeout_s

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def check(self, arguments: dict[str, Any], context: dict[str, Any]) -> str | None:
        return self.inner.check(arguments, context)

    def route(self, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        return self.inner.route(arguments)

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        call = self.book.take_tool(self.name, arguments)
        if call is None:
            raise ToolError(WOULD_CALL)
        if call.result is None:
            raise ToolError(call.reason or "failed (as logged)")
        return call.result


class RecordedModel(ModelProvider):
    """The configured provider behind the log's answers: a prompt seen before gets its answer."""

    def __init__(self, inner: ModelProvider, book: Book) -> None:
        super().__init__(inner.model)
        self.inner, self.book = inner, book
        self.name = inner.name
        self.reads_values, self.calls_tools = inner.reads_values, inner.calls_tools

    async def execute(self, prompt: Prompt) -> Response:
        recorded = self.book.take_model(prompt.purpose, prompt_digest(prompt))
        if recorded is None:
            return await self.inner.execute(prompt)
        answer = recorded["response"]
        calls = [
            ToolCall(str(c.get("id", "")), str(c.get("name", "")), c.get("arguments"))
            for c in answer.get("tool_calls") or []
        ]
        return Response(
            str(answer.get("text", "")),
            int(recorded.get("tokens_in", 0)),
            int(recorded.get("tokens_out", 0)),
            calls,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
