"""The turn record's shape. Every key is on every turn, so tools and tests can rely on it."""

from __future__ import annotations

from bot.turn.turn import ReplyPart, TurnRecord, UserPart


def new_reply() -> ReplyPart:
    """The record's ``reply`` part before anything was worded or gated."""
    return {"text": None, "gate": {"passed": None, "reasons": [], "rules": []}, "attempts": 0}


def new_record(
    conversation_id: str,
    seq: int,
    text: str,
    channel: str,
    external_id: str | None,
    preflight_mode: str = "off",
    verified_user_id: str | None = None,
) -> TurnRecord:
    user: UserPart = {"id": verified_user_id, "verified": verified_user_id is not None}
    return {
        "conversation_id": conversation_id,
        "seq": seq,
        "message": {"text": text, "channel": channel, "external_id": external_id, "user": user},
        "preflight": {
            "mode": preflight_mode,
            "answers": [],
            "acted": None,
            "decision": None,  # what the answers decide (recorded in shadow mode too)
            "sentence": None,  # what the customer is told happened, in their language
            "error": None,  # why pre-flight could not be used; the turn ran without it
            "version": "",
            "ms": 0.0,
        },
        # The domain check's score and threshold stay null when it does not run (bot.turn.scope).
        "scope": {"verdict": None, "rule": None, "score": None, "threshold": None},
        "reads": [],
        "values": [],
        "legal": {"moves": [], "rule": None, "outcome": None},
        "move": {"name": None, "why": None, "escalate": False},
        "facts": [],
        "reply": new_reply(),
        # The flow that decided this turn: {"name", "run", "step", "status", "steps"}, or null.
        "flow": None,
        "tools": [],
        "model_calls": [],
        "forecast": {"p_convert": None, "validated": False},
        "versions": {"pack": None, "heads": {}},
        "timings": {"total_ms": 0.0},
    }


RECORD_KEYS = tuple(new_record("", 0, "", "", None))
