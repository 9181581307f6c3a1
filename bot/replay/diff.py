"""What changed in one turn between the log and the replay, decision by decision.

The decisions compared (each a key of :attr:`TurnDiff.changes`): the scope verdict and rule,
the reads that cross a gate (same head, another outcome), the legal set and its rule, the move
(and whether it escalates), the facts cited, the reply's text, and the tool calls (each call's
tool and how it ended, with the calls the log lacked, which the replay would have made). A model
prompt that differs from the logged one is noted too, but is no decision of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.replay.sandbox import ReplayedTurn

DECISIONS = ("scope", "reads", "legal", "move", "facts", "reply", "tools")


@dataclass
class TurnDiff:
    conversation_id: str
    seq: int
    text: str
    #: decision -> {"before", "after"}; empty when the replay decided as the log did.
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The reads whose outcome changed: head, gate, confidence and threshold, before and after.
    crossed: list[dict[str, Any]] = field(default_factory=list)
    would_call: list[dict[str, Any]] = field(default_factory=list)
    model_changed: list[str] = field(default_factory=list)
    skipped: str | None = None  # why the turn was not replayed

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def as_dict(self) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation_id,
            "seq": self.seq,
            "text": self.text,
            "changed": self.changed,
            "changes": self.changes,
            "crossed": self.crossed,
            "would_call": self.would_call,
            "model_changed": self.model_changed,
            "skipped": self.skipped,
        }


def diff_turn(turn: ReplayedTurn) -> TurnDiff:
    old, new = turn.logged, turn.replayed
    out = TurnDiff(old["conversation_id"], old["seq"], old["message"]["text"])
    if new is None:
        out.skipped = "staff had the conversation"
        return out
    new_d: dict[str, Any] = dict(new)
    out.crossed = crossed_reads(old.get("reads") or [], new_d.get("reads") or [])
    out.would_call, out.model_changed = list(turn.would_call), list(turn.model_changed)
    for name in DECISIONS:
        before: Any
        after: Any
        if name == "reads":
            before, after = (
                [_read_key(r) for r in out.crossed],
                [_read_key(r, 1) for r in out.crossed],
            )
        else:
            before, after = SUMMARY[name](old), SUMMARY[name](new_d)
            if name == "tools" and out.would_call:
                after = [*after, *(f"would call {c['tool']}" for c in out.would_call)]
        if before != after:
            out.changes[name] = {"before": before, "after": after}
    return out


def crossed_reads(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reads of the same head (the n-th of a head with the n-th) whose outcome differs."""
    out = []
    for (head, n), before in _by_head(old).items():
        after = _by_head(new).get((head, n))
        if after is not None and before.get("outcome") != after.get("outcome"):
            out.append(
                {
                    "head": head,
                    "gate": after.get("gate"),
                    "answer": [before.get("answer"), after.get("answer")],
                    "confidence": [before.get("confidence"), after.get("confidence")],
                    "threshold": [before.get("threshold"), after.get("threshold")],
                    "outcome": [before.get("outcome"), after.get("outcome")],
                }
            )
    return out


def _by_head(reads: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    seen: dict[str, int] = {}
    out = {}
    for read in reads:
        head = str(read.get("head"))
        seen[head] = seen.get(head, 0) + 1
        out[(head, seen[head])] = read
    return out


def _read_key(crossed: dict[str, Any], side: int = 0) -> str:
    return f"{crossed['head']}: {crossed['outcome'][side]}"


def _tools(record: dict[str, Any]) -> list[str]:
    """Each call as ``tool: how it ended`` (ok, failed, refused, dry_run)."""
    out = []
    for event in record.get("tools") or []:
        detail = event.get("detail") or {}
        if event.get("event") == "finished":
            out.append(f"{event['tool']}: {detail.get('status', 'ok')}")
        elif event.get("event") in ("failed", "refused"):
            out.append(f"{event['tool']}: {event['event']}")
    return out


SUMMARY = {
    "scope": lambda r: [r["scope"].get("verdict"), r["scope"].get("rule")],
    "legal": lambda r: [sorted(r["legal"].get("moves") or []), r["legal"].get("rule")],
    "move": lambda r: [r["move"].get("name"), bool(r["move"].get("escalate"))],
    "facts": lambda r: [f.get("key") for f in r.get("facts") or []],
    "reply": lambda r: (r.get("reply") or {}).get("text"),
    "tools": _tools,
}
