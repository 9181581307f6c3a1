"""The sandbox a replay runs in: the new pack's agent over a store of its own, acting on nothing.

:class:`SandboxApp` is the app built for the new pack, as ``gatebot run`` would build it, over a
temporary SQLite store, with no channel and no recorder: an escalation is queued in that store
(so a hand-off waits as it did when logged) and posted nowhere. Every tool is a
:class:`~bot.replay.recorded.RecordedTool` and every model provider a
:class:`~bot.replay.recorded.RecordedModel` over one :class:`~bot.replay.recorded.Book`, which
holds the calls of the conversation being replayed.
Each logged conversation starts afresh in the sandbox store, so its state is rebuilt turn by turn
from the replayed turns, never copied from the log.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

from bot.app import App
from bot.config import Settings
from bot.extend.provider import ModelProvider
from bot.extend.recorder import Recorder
from bot.extend.tool import ToolRegistry
from bot.replay.log import LoggedConversation, is_paused
from bot.replay.recorded import Book, RecordedModel, RecordedTool
from bot.store.models import Conversation
from bot.turn.turn import TurnRecord


@dataclasses.dataclass
class ReplayedTurn:
    """One logged turn and what the new pack made of it (None: skipped, staff had it)."""

    logged: dict[str, Any]
    replayed: TurnRecord | None
    would_call: list[dict[str, Any]]
    model_changed: list[str]


class SandboxApp(App):
    """The app with recorded tools and models, and nothing that reaches out."""

    def __init__(self, settings: Settings, book: Book) -> None:
        self.book = book  # before the app's build, which chooses the provider and tools
        super().__init__(settings)

    def _choose_provider(self, spec: str) -> ModelProvider:
        return RecordedModel(super()._choose_provider(spec), self.book)

    def _build_tools(self) -> ToolRegistry:
        recorded = ToolRegistry()
        for tool in super()._build_tools():
            recorded.add(RecordedTool(tool, self.book))
        return recorded

    def _builtin_recorders(self) -> list[Recorder]:
        return []


async def _nowhere(*args: Any, **kwargs: Any) -> None:
    """Where a sandbox's relays to a help desk go."""


class Sandbox:
    """The new pack's agent over a temporary store; ``async with`` starts and removes it."""

    def __init__(self, settings: Settings, pack: Path) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="gatebot-replay-")
        self.settings = dataclasses.replace(
            settings,
            pack=Path(pack),
            data_dir=Path(self._tmp.name),
            database_url="",  # SQLite in the temporary data dir
            recorders=[],
            email=None,
            retention_days=None,
        )
        self.book = Book()
        self.app: SandboxApp | None = None

    async def __aenter__(self) -> Sandbox:
        try:
            self.app = SandboxApp(self.settings, self.book)
            # Escalations are queued in the sandbox's store as live (a hand-off then waits as it
            # did), but with no channel running nothing is posted; relays go nowhere.
            self.app.agent.relay = _nowhere
            await self.app.start(channels=False)
        except BaseException:
            self._tmp.cleanup()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            if self.app is not None:
                await self.app.stop()
        finally:
            self._tmp.cleanup()

    async def replay(self, logged: LoggedConversation) -> list[ReplayedTurn]:
        """Re-run the customer's messages of one conversation, turn by turn, from a fresh start."""
        app = self.app
        assert app is not None, "use the sandbox inside `async with`"
        self.book.load(logged.turns)
        conv = Conversation(id=logged.id, channel=logged.channel, verified_user_id=logged.user_id)
        await app.db.call(_add, app.store, conv)
        out = []
        for record in logged.turns:
            if is_paused(record):
                out.append(ReplayedTurn(record, None, [], []))
                continue
            self.book.begin_turn()
            key = f"{logged.id}:replay-{record['seq']}"
            result = await app.agent.handle(conv, record["message"]["text"], key)
            book = self.book
            out.append(ReplayedTurn(record, result.record, book.would_call, book.model_changed))
        return out


def _add(store: Any, conv: Conversation) -> None:
    with store.session() as s:
        s.add(conv)
        s.commit()
