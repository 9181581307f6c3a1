"""``gatebot replay``: re-run logged conversations through a new pack; say which decisions change.

- :mod:`bot.replay.log`: the logged conversations, from a turns.jsonl file or the store.
- :mod:`bot.replay.recorded`: recorded tool results and model answers handed back; no call out.
- :mod:`bot.replay.sandbox`: the new pack's agent over a temporary store, a conversation at a time.
- :mod:`bot.replay.diff`: one turn's decisions, log against replay.
- :mod:`bot.replay.report`: the report, as text, JSON and one HTML page.

:func:`replay` is the whole of it for any caller (the command, an inspector page).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from bot.config import Settings
from bot.replay.diff import TurnDiff, diff_turn
from bot.replay.log import LogError, LoggedConversation, from_jsonl, from_store
from bot.replay.report import ReplayReport
from bot.replay.sandbox import Sandbox

__all__ = [
    "LogError",
    "LoggedConversation",
    "ReplayReport",
    "TurnDiff",
    "from_jsonl",
    "from_store",
    "replay",
]


async def replay(
    log: list[LoggedConversation],
    new_pack: Path,
    settings: Settings,
    source: str = "log",
    progress: Callable[[list[LoggedConversation]], Iterable[LoggedConversation]] = iter,
) -> ReplayReport:
    """Re-run every conversation of ``log`` through ``new_pack`` (with ``settings``' model,
    heads and plugins) in a sandbox, and report each turn's changed decisions."""
    async with Sandbox(settings, new_pack) as sandbox:
        assert sandbox.app is not None
        pack = sandbox.app.pack
        report = ReplayReport(f"{pack.name} {pack.version}", source, conversations=len(log))
        for conv in progress(log):
            for turn in await sandbox.replay(conv):
                report.turns.append(diff_turn(turn))
    return report
