"""Validating and storing outcomes and turn labels (the staff REST API and help desks call these).

Every field is checked before anything is written, so a bad request stores nothing.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from bot.heads import NONE
from bot.outcomes import KINDS, NotFound, OutcomeError
from bot.packs import Pack
from bot.store import Outcome, Store, Turn, TurnLabel

_TEXT_LIMITS = {"external_id": 255, "staff": 255, "note": 2000}
#: The heads a label may be given for, and what a label of theirs may say (besides ``none``).
LABELLED_HEADS = ("intent",)


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise OutcomeError(f"{key} must be a non-empty string")
    if len(value) > _TEXT_LIMITS[key]:
        raise OutcomeError(f"{key} is longer than {_TEXT_LIMITS[key]} characters")
    return value.strip()


def parse_outcome(data: dict[str, Any]) -> dict[str, Any]:
    """The outcome's fields from a request body, each checked (OutcomeError names the bad one)."""
    unknown = set(data) - {"conversation_id", "kind", "external_id", "staff", "note", "value", "at"}
    if unknown:
        raise OutcomeError(f"unknown field(s): {', '.join(sorted(unknown))}")
    conversation = data.get("conversation_id")
    if not isinstance(conversation, str) or not 0 < len(conversation) <= 64:
        raise OutcomeError("conversation_id is required: the conversation's id")
    kind = data.get("kind")
    if kind not in KINDS:
        raise OutcomeError(f"kind must be one of {', '.join(KINDS)}")
    value = data.get("value")
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
    ):
        raise OutcomeError("value must be a number")
    at = data.get("at")
    occurred = None
    if at is not None:
        try:
            occurred = datetime.fromisoformat(str(at))
        except ValueError:
            raise OutcomeError("at must be an ISO 8601 date and time") from None
    return {
        "conversation_id": conversation,
        "kind": kind,
        "external_id": _text(data, "external_id"),
        "staff": _text(data, "staff"),
        "note": _text(data, "note"),
        "value": None if value is None else float(value),
        "occurred_at": occurred,
    }


def turn_links(turns: list[Turn]) -> list[dict[str, Any]]:
    """What links an outcome to the turns behind it: each turn's id and seq, the version of every
    head that read it (the candidate's, under ``shadow``) and the forecast's version and p."""
    links = []
    for t in turns:
        record = t.record or {}
        heads = {r["head"]: r["version"] for r in record.get("reads", []) if "version" in r}
        shadow = {
            r["head"]: r["shadow"]["version"]
            for r in record.get("reads", [])
            if isinstance(r.get("shadow"), dict) and "version" in r["shadow"]
        }
        forecast = record.get("forecast") or {}
        link: dict[str, Any] = {"id": t.id, "seq": t.seq, "heads": heads}
        if shadow:
            link["shadow"] = shadow
        if forecast.get("version"):
            link["forecast"] = {"version": forecast["version"], "p": forecast.get("p_convert")}
        links.append(link)
    return links


def record_outcome(store: Store, fields: dict[str, Any], source: str) -> tuple[Outcome, bool]:
    """Store an outcome from :func:`parse_outcome`'s fields; (the row, whether it was a repeat of
    an earlier delivery with the same external id). NotFound for an unknown conversation."""
    if store.get_conversation(fields["conversation_id"]) is None:
        raise NotFound(f"no conversation {fields['conversation_id']}")
    if fields.get("external_id"):
        found = store.outcome_by_external(fields["external_id"])
        if found is not None:
            if (found.conversation_id, found.kind) != (fields["conversation_id"], fields["kind"]):
                raise OutcomeError(
                    f"external_id {fields['external_id']} was already recorded as "
                    f"{found.kind} for another conversation or kind"
                )
            return found, True
    links = turn_links(store.turns(fields["conversation_id"]))
    return store.add_outcome(Outcome(**fields, source=source, turns=links))


def label_choices(pack: Pack) -> list[str]:
    """What a turn's intent label may say: the pack's intents (and its flows' example labels),
    sorted; ``none`` (nothing the pack declares) is allowed besides."""
    return sorted({i.name for i in pack.intents} | {lab for _, lab in pack.flow_examples()})


def label_turn(
    store: Store, pack: Pack, turn_id: int, data: dict[str, Any]
) -> tuple[TurnLabel, Turn]:
    """Staff's label of one turn: ``{"intent": NAME | "none", "staff"?}`` (``none``: nothing the
    pack declares). The intent must be one the pack declares, so a typo never becomes gold."""
    unknown = set(data) - {"intent", "staff"}
    if unknown:
        raise OutcomeError(f"unknown field(s): {', '.join(sorted(unknown))}")
    intent = data.get("intent")
    known = label_choices(pack)
    if not isinstance(intent, str) or intent not in (*known, NONE):
        raise OutcomeError(f"intent must be one of the pack's intents or none: {', '.join(known)}")
    staff = _text(data, "staff")
    turn = store.get_turn(turn_id)
    if turn is None:
        raise NotFound(f"no turn {turn_id}")
    return store.label_turn(turn_id, "intent", intent, staff), turn


def outcome_json(outcome: Outcome, duplicate: bool = False) -> dict[str, Any]:
    return {
        "outcome": {
            "id": outcome.id,
            "conversation_id": outcome.conversation_id,
            "kind": outcome.kind,
            "source": outcome.source,
            "external_id": outcome.external_id,
            "staff": outcome.staff,
            "value": outcome.value,
            "turns": outcome.turns,
        },
        "duplicate": duplicate,
    }


def label_json(label: TurnLabel, turn: Turn) -> dict[str, Any]:
    """A stored turn label, with what the intent head read and whether staff confirmed it."""
    reads = (turn.record or {}).get("reads", [])
    read: dict[str, Any] = next(
        (r for r in reads if isinstance(r, dict) and r.get("head") == "intent"), {}
    )
    return {
        "turn": {"id": turn.id, "conversation_id": turn.conversation_id, "seq": turn.seq},
        "label": {"head": label.head, "intent": label.label, "staff": label.staff},
        "read": {"version": read.get("version"), "answer": read.get("answer")},
        "confirmed": read.get("answer") == label.label,
    }
