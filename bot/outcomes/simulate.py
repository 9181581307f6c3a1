"""Synthetic labelled traffic: conversations whose turn records carry the readings a pinned
head and a candidate in its shadow would have made, with staff labels and outcomes, written
straight into a store (thousands of conversations in seconds, no turn run).

A reader is a :class:`Profile`: how sure it says it is (a Beta distribution) and how often it is
right at a given confidence (``p + bias``; 0 is calibrated, negative is overconfident). The
benchmark (``bench/outcomes.py``) and the promotion test use it; nothing at run time does.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import numpy as np
import sqlalchemy as sa

from bot.heads import NONE
from bot.outcomes import CONVERTED
from bot.outcomes.labels import turn_links
from bot.store import Store, Turn
from bot.store.models import Conversation, Message, Outcome, TurnLabel, now
from bot.turn.forecast import VERSION as FORECAST_VERSION
from bot.turn.record import new_record

NOT_CONVERTED = ("churn", "resolved", "not-resolved", "demo")
CONVERSATIONS = Conversation.__table__  # type: ignore[attr-defined]
MESSAGES = Message.__table__  # type: ignore[attr-defined]
TURNS = Turn.__table__  # type: ignore[attr-defined]
LABELS = TurnLabel.__table__  # type: ignore[attr-defined]
OUTCOMES = Outcome.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Profile:
    """A synthetic reader: its version, its confidence's Beta(a, b) and its calibration bias."""

    version: str
    a: float
    b: float
    bias: float = 0.0


@dataclass
class Traffic:
    """What to generate: conversations, the readers, and the shares labelled."""

    conversations: int
    intents: list[str]
    pinned: Profile
    shadows: list[Profile]  # the candidate beside the pinned head, in turn, over the conversations
    labelled_share: float = 0.7  # turns staff labelled
    none_share: float = 0.2  # turns that ask for nothing the pack declares
    seed: int = 0


def _read(rng: np.random.Generator, p: Profile, gold: str, intents: list[str]) -> dict[str, Any]:
    conf = float(np.clip(rng.beta(p.a, p.b), 0.05, 0.999))
    right = rng.random() < np.clip(conf + p.bias, 0.0, 1.0)
    others = [x for x in (*intents, NONE) if x != gold]
    answer = gold if right else str(rng.choice(others))
    outcome = "act" if answer != NONE and conf >= 0.9 else "unsure"
    return {
        "head": "intent",
        "version": p.version,
        "answer": answer,
        "confidence": round(conf, 4),
        "gate": "intent",
        "threshold": 0.9,
        "outcome": outcome,
    }


def _record(rng: np.random.Generator, t: Traffic, cid: str, seq: int, shadow: Profile) -> Any:
    gold = NONE if rng.random() < t.none_share else str(rng.choice(t.intents))
    record = new_record(cid, seq, f"synthetic message {seq}", "web", None)
    read = _read(rng, t.pinned, gold, t.intents)
    read["shadow"] = _read(rng, shadow, gold, t.intents)
    record["reads"] = [read]  # type: ignore[list-item]
    record["move"]["name"] = "answer"
    record["versions"]["heads"] = {"intent": t.pinned.version}
    return record, gold


def _forecast(rng: np.random.Generator) -> tuple[float, bool]:
    """A conversation's forecast and whether it converted: the forecast is a noisy, somewhat
    overconfident reading of the conversation's true chance."""
    chance = float(rng.beta(1.5, 4.0))
    shown = float(np.clip(chance * 1.25 + rng.normal(0, 0.05), 0.01, 0.99))
    return round(shown, 4), bool(rng.random() < chance)


def seed_traffic(store: Store, t: Traffic) -> dict[str, int]:
    """Write ``t``'s conversations, turns, labels and outcomes to ``store``; the counts."""
    rng = np.random.default_rng(t.seed)
    stamp = now()
    counts = {"conversations": 0, "turns": 0, "labels": 0, "outcomes": 0}
    per_shadow = -(-t.conversations // max(len(t.shadows), 1))
    with store.engine.begin() as conn:
        for n in range(t.conversations):
            cid = secrets.token_hex(16)
            conv: dict[str, Any] = {
                "id": cid,
                "channel": "web",
                "status": "resolved",
                "paused": False,
            }
            conv.update(language="en", turn_count=0, state={}, created_at=stamp, updated_at=stamp)
            conn.execute(sa.insert(CONVERSATIONS), conv)
            shadow = t.shadows[min(n // per_shadow, len(t.shadows) - 1)]
            p_convert, converted = _forecast(rng)
            turns = [
                _turn(conn, rng, t, (cid, seq, stamp), shadow, p_convert, counts)
                for seq in range(1, int(rng.integers(1, 4)) + 1)
            ]
            kinds = sorted(CONVERTED) if converted else list(NOT_CONVERTED)
            outcome: dict[str, Any] = {"conversation_id": cid, "kind": str(rng.choice(kinds))}
            outcome.update(source="api", turns=turn_links(turns), created_at=stamp)
            conn.execute(sa.insert(OUTCOMES), outcome)
            counts["conversations"] += 1
            counts["outcomes"] += 1
    return counts


def _turn(
    conn: Any,
    rng: np.random.Generator,
    t: Traffic,
    at: tuple[str, int, Any],
    shadow: Profile,
    p_convert: float,
    counts: dict[str, int],
) -> Turn:
    """One turn: its message, its record (both readings and the forecast), maybe its label."""
    cid, seq, stamp = at
    record, gold = _record(rng, t, cid, seq, shadow)
    record["forecast"] = {"p_convert": p_convert, "validated": False, "version": FORECAST_VERSION}
    msg: dict[str, Any] = {
        "conversation_id": cid,
        "channel": "web",
        "role": "customer",
        "status": "processed",
    }
    msg.update(text=record["message"]["text"], created_at=stamp)
    message_id = conn.execute(sa.insert(MESSAGES).returning(MESSAGES.c.id), msg).scalar_one()
    row: dict[str, Any] = {
        "conversation_id": cid,
        "seq": seq,
        "message_id": message_id,
        "move": "answer",
    }
    row.update(scope="in", intent=record["reads"][0]["answer"], escalate=False, total_ms=0.0)
    row.update(record=dict(record), replies=[], created_at=stamp)
    turn_id = conn.execute(sa.insert(TURNS).returning(TURNS.c.id), row).scalar_one()
    counts["turns"] += 1
    if rng.random() < t.labelled_share:
        label = {"turn_id": turn_id, "head": "intent", "label": gold, "staff": "sim"}
        conn.execute(sa.insert(LABELS), {**label, "created_at": stamp, "updated_at": stamp})
        counts["labels"] += 1
    return Turn(id=turn_id, **row)


#: The sample story: the pinned head is a little overconfident and rarely sure; the worse
#: candidate is sure more often and wrong more often; the better one is sure often, and right.
PINNED = (8.0, 1.5, -0.05)
WORSE = (12.0, 1.0, -0.15)
BETTER = (12.0, 1.0, 0.0)


def demo_traffic(
    intents: list[str], pinned: str, worse: str, better: str, conversations: int = 2000
) -> Traffic:
    """2,000 conversations: the worse candidate beside the pinned head for the first half, the
    better one for the second (as when a refused candidate is retrained and tried again)."""
    return Traffic(
        conversations,
        intents,
        Profile(pinned, *PINNED),
        [Profile(worse, *WORSE), Profile(better, *BETTER)],
    )
