"""The logged conversations a replay re-runs: read from the JSONL recorder's file or the store.

A logged conversation is its turn records in order. Only what the records hold is used (the
customer's words, the channel, the verified user, and the recorded tool results and model
answers), so a log written by an older version replays as long as its records have that shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.errors import GatebotError

#: The legal rule of a turn that staff answered (the agent stayed quiet); a replay skips it.
PAUSED_RULE = "paused: staff have taken over"


class LogError(GatebotError):
    """A log that cannot be read; the message names the file and line."""


@dataclass
class LoggedConversation:
    id: str
    channel: str
    user_id: str | None
    turns: list[dict[str, Any]] = field(default_factory=list)


def from_jsonl(path: Path, ids: list[str] | None = None) -> list[LoggedConversation]:
    """The conversations of a turns.jsonl file, each with its turns in order of ``seq``."""
    if not path.is_file():
        raise LogError(f"{path}: no such file")
    records: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as lines:
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LogError(f"{path}:{n}: not JSON ({exc.msg})") from None
            if not _is_record(record):
                raise LogError(
                    f"{path}:{n}: not a turn record (needs conversation_id, seq, message)"
                )
            records.append(record)
    return _group(records, ids)


def from_store(
    store: Any, since: datetime | None = None, ids: list[str] | None = None
) -> list[LoggedConversation]:
    """The stored conversations with a turn at or after ``since`` (all with none), whole: a
    replay needs a conversation from its first turn to rebuild its state."""
    from sqlmodel import col, select

    from bot.store.models import Turn

    with store.session() as s:
        query = select(Turn.conversation_id).distinct()
        if since is not None:
            query = query.where(col(Turn.created_at) >= since)
        if ids:
            query = query.where(col(Turn.conversation_id).in_(ids))
        wanted = list(s.exec(query))
        if not wanted:
            return _group([], ids)  # names the ids asked for that have no turns
        rows = s.exec(
            select(Turn).where(col(Turn.conversation_id).in_(wanted)).order_by(col(Turn.id))
        )
        records = [dict(row.record) for row in rows]
    return _group([r for r in records if _is_record(r)], ids)


def _is_record(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("conversation_id"), str)
        and isinstance(record.get("seq"), int)
        and isinstance(record.get("message"), dict)
        and isinstance(record["message"].get("text"), str)
    )


def _group(records: list[dict[str, Any]], ids: list[str] | None) -> list[LoggedConversation]:
    """Records by conversation, in the order each conversation first appears; ``ids`` keeps
    those (and says which are missing)."""
    convs: dict[str, LoggedConversation] = {}
    for record in records:
        cid, message = record["conversation_id"], record["message"]
        conv = convs.get(cid)
        if conv is None:
            user = message.get("user") or {}
            conv = convs[cid] = LoggedConversation(
                cid, message.get("channel") or "web", user.get("id")
            )
        conv.turns.append(record)
    for conv in convs.values():
        conv.turns.sort(key=lambda r: r["seq"])
    if ids:
        missing = [i for i in ids if i not in convs]
        if missing:
            raise LogError(f"no logged turns for conversation(s): {', '.join(missing)}")
        return [convs[i] for i in ids]
    return list(convs.values())


def is_paused(record: dict[str, Any]) -> bool:
    """Whether staff had the conversation for this turn (nothing the agent decided)."""
    return (record.get("legal") or {}).get("rule") == PAUSED_RULE
