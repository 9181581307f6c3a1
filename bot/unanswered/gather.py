"""Reading what the agent could not answer out of the store.

Two lists in each conversation's state hold it (``bot.turn.agent``): ``unanswered``, questions
no fact answered (below the answerability gate, or nothing found), and ``uncovered``, requests the
scope check declined as outside the pack. The lists carry no times, so each entry is dated by the
turn whose customer message it is; an entry no message matches (a question held while slots were
asked for, then searched) takes the conversation's last update.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlmodel import col, select

from bot.store.models import Conversation, Message, Turn

#: The state lists read, and the kind each entry is reported as.
KINDS = {"unanswered": "unanswered", "uncovered": "out_of_scope"}
#: Conversations whose turns are read in one query (SQL parameter lists stay short).
CHUNK = 500


@dataclass(frozen=True)
class Asked:
    """One question or request the agent could not answer."""

    text: str
    kind: str  # "unanswered" or "out_of_scope"
    conversation_id: str
    at: datetime


def gather(store: Any, since: datetime | None = None) -> list[Asked]:
    """Every unanswered question and out-of-scope request in ``store``, oldest first; only those
    at or after ``since`` (UTC) when given."""
    since = _utc(since) if since is not None else None
    with store.session() as s:
        stmt = select(Conversation.id, Conversation.state, Conversation.updated_at)
        if since is not None:
            # A conversation last updated before ``since`` has no turn after it.
            stmt = stmt.where(col(Conversation.updated_at) >= since)
        held = [(cid, state, at) for cid, state, at in s.exec(stmt) if _entries(state)]
        asked: list[Asked] = []
        for start in range(0, len(held), CHUNK):
            chunk = held[start : start + CHUNK]
            times = _message_times(s, [cid for cid, _, _ in chunk])
            for cid, state, updated in chunk:
                asked += _dated(cid, state, times[cid], _utc(updated))
    if since is not None:
        asked = [a for a in asked if a.at >= since]
    return sorted(asked, key=lambda a: (a.at, a.conversation_id))


def _entries(state: Any) -> list[tuple[str, str]]:
    """(kind, text) for each entry of the state's lists, in list order."""
    if not isinstance(state, dict):
        return []
    out = []
    for key, kind in KINDS.items():
        values = state.get(key)
        for text in values if isinstance(values, list) else []:
            if isinstance(text, str) and text.strip():
                out.append((kind, text.strip()))
    return out


def _message_times(session: Any, ids: list[str]) -> dict[str, dict[str, deque[datetime]]]:
    """Per conversation, the times of the turns that read each customer text, oldest first."""
    stmt = (
        select(Turn.conversation_id, Message.text, Turn.created_at)
        .join(Message, col(Message.id) == col(Turn.message_id))
        .where(col(Turn.conversation_id).in_(ids))
        .order_by(col(Turn.conversation_id), col(Turn.seq))
    )
    times: dict[str, dict[str, deque[datetime]]] = defaultdict(lambda: defaultdict(deque))
    for cid, text, at in session.exec(stmt):
        times[cid][(text or "").strip()].append(_utc(at))
    return times


def _dated(
    cid: str, state: Any, times: dict[str, deque[datetime]], updated: datetime
) -> Iterator[Asked]:
    for kind, text in _entries(state):
        seen = times.get(text)
        # The same text asked twice takes the second turn's time the second time.
        at = seen.popleft() if seen else updated
        yield Asked(text, kind, cid, at)


def _utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; the store writes UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
