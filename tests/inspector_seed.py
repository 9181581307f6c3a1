"""Long conversations for the inspector's tests, bench and screenshots, written straight through
the store (the inbox and ``complete_turn``, as a real turn ends) rather than by running turns:
200 turns take a fraction of a second this way.

Each turn's record varies: every fifth has an unsure read, every seventh a refused draft, every
eleventh escalates, a few run a flow step, call a tool and cite facts.
"""

from __future__ import annotations

from typing import Any

from bot.store import Conversation, Store
from bot.turn.record import new_record

FACTS = ("faq-pricing", "faq-trial", "faq-docker", "faq-slack-alerts")


def record_for(conv_id: str, seq: int, text: str, channel: str = "web") -> dict[str, Any]:
    record: dict[str, Any] = dict(new_record(conv_id, seq, text, channel, f"m{seq}"))
    unsure, refused, escalate = seq % 5 == 0, seq % 7 == 0, seq % 11 == 0
    confidence = 0.42 if unsure else 0.91
    record["scope"] = {"verdict": "in", "rule": "domain", "score": 0.61, "threshold": 0.35}
    record["reads"] = [
        {
            "head": "intent",
            "version": "v1",
            "answer": "pricing",
            "confidence": confidence,
            "gate": "intent",
            "threshold": 0.6,
            "outcome": "unsure" if unsure else "act",
        },
        {
            "head": "sentiment",
            "version": "v1",
            "answer": "neutral",
            "confidence": 0.77,
            "gate": "sentiment",
            "threshold": 0.5,
            "outcome": "act",
            "score": 0.1,
        },
    ]
    record["legal"] = {
        "moves": ["answer", "clarify", "escalate"],
        "rule": "answerable",
        "outcome": "demo" if seq % 13 == 0 else None,  # a turn working toward a demo
    }
    move = "escalate" if escalate else ("clarify" if unsure else "answer")
    record["move"] = {"name": move, "why": f"seeded turn {seq}", "escalate": escalate}
    record["facts"] = [{"key": FACTS[seq % len(FACTS)], "source": "faq.yaml", "mode": "quote"}]
    gate = {
        "passed": not refused,
        "reasons": ["cites no fact"] if refused else [],
        "rules": ["citations"] if refused else [],
    }
    record["reply"] = {"text": f"Answer {seq}", "gate": gate, "attempts": 2 if refused else 1}
    record["model_calls"] = [
        {
            "provider": "offline",
            "model": "templates",
            "purpose": "reply",
            "ms": 3.2,
            "tokens_in": 120,
            "tokens_out": 24,
        }
    ]
    if seq % 13 == 0:
        record["tools"] = [
            {"tool": "orders.lookup", "event": "finished", "detail": {"status": "ok"}}
        ]
        record["flow"] = {
            "name": "refund",
            "run": None,
            "step": "lookup",
            "status": "active",
            "steps": [],
        }
    record["timings"] = {"total_ms": 12.5}
    return record


def seed_conversation(
    store: Store, turns: int = 200, channel: str = "web", words: str = "How much does it cost"
) -> Conversation:
    """A conversation of ``turns`` customer messages, each with its stored turn and reply."""
    conv, _ = store.create_conversation(channel, with_token=True)
    for seq in range(1, turns + 1):
        text = f"{words} ({seq})?"
        message, _ = store.receive(conv.id, channel, f"{conv.id}:{seq}", text)
        conv.turn_count = seq
        replies = [{"type": "text", "text": f"Answer {seq}"}]
        store.complete_turn(
            conv, message, record_for(conv.id, seq, text, channel), replies, channel
        )
    return conv
