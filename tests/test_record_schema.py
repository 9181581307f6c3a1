"""The typed turn record (bot.turn.turn.TurnRecord) is exactly the JSON shape DESIGN.md documents,
and the records real turns produce conform to it, key by key and type by type."""

from __future__ import annotations

import types
import typing
from typing import Any, NotRequired, Required, Union, get_args, get_origin, get_type_hints

import pytest

from bot.app import App
from bot.extend.recorder import MemoryRecorder
from bot.turn.record import RECORD_KEYS, new_record
from bot.turn.turn import ConversationState, TurnRecord

#: The top-level keys of the record as ../shared/DESIGN.md lists them, in order.
DESIGN_KEYS = (
    "conversation_id",
    "seq",
    "message",
    "preflight",
    "scope",
    "reads",
    "values",
    "legal",
    "move",
    "facts",
    "reply",
    "flow",
    "tools",
    "model_calls",
    "forecast",
    "versions",
    "timings",
)


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def problems(value: Any, tp: Any, where: str = "record") -> list[str]:
    """Where ``value`` does not conform to the type ``tp`` (empty when it does)."""
    origin = get_origin(tp)
    if tp is Any:
        return []
    if origin in (Union, types.UnionType):
        options = [problems(value, t, where) for t in get_args(tp)]
        return [] if any(not o for o in options) else [f"{where}: {value!r} is not {tp}"]
    if origin in (NotRequired, Required):
        return problems(value, get_args(tp)[0], where)
    if _is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        hints = get_type_hints(tp)
        out = [f"{where}: unknown key {k!r}" for k in value if k not in hints]
        out += [f"{where}: missing {k!r}" for k in tp.__required_keys__ if k not in value]
        for key, hint in hints.items():
            if key in value:
                out += problems(value[key], hint, f"{where}.{key}")
        return out
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        (item,) = get_args(tp)
        return [p for i, v in enumerate(value) for p in problems(v, item, f"{where}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        _, item = get_args(tp)
        return [p for k, v in value.items() for p in problems(v, item, f"{where}.{k}")]
    if tp is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not a number"]
    if isinstance(tp, type):
        return [] if isinstance(value, tp) else [f"{where}: {value!r} is not {tp.__name__}"]
    raise AssertionError(f"the checker does not know {tp!r}")


def test_the_typed_record_has_the_documented_keys_in_order() -> None:
    assert tuple(get_type_hints(TurnRecord)) == DESIGN_KEYS == RECORD_KEYS
    assert TurnRecord.__required_keys__ == frozenset(DESIGN_KEYS)


def test_a_new_record_conforms() -> None:
    assert problems(new_record("c1", 1, "hi", "web", None), TurnRecord) == []
    assert problems(new_record("c1", 1, "hi", "web", "m1", "shadow"), TurnRecord) == []


def test_the_checker_finds_what_does_not_conform() -> None:
    record: Any = new_record("c1", 1, "hi", "web", None)
    record["move"]["escalate"] = "yes"
    record["reads"].append({"head": "intent"})
    record["extra"] = 1
    found = problems(record, TurnRecord)
    assert "record: unknown key 'extra'" in found
    assert any(p.startswith("record.move.escalate") for p in found)
    assert any(p.startswith("record.reads[0]: missing") for p in found)


CONVERSATIONS = [
    ["hello", "what's the weather in Paris", "I want a demo", "bob", "???"],
    ["How do I set up alerts in Monitor?", "can I talk to a person"],
    ["I'd like a refund for order 1042", "alex@example.com", "yes"],
    ["add 2 seats", "undo"],
    ["no thanks", "actually, what does Monitor cost?"],
]


@pytest.mark.parametrize("texts", CONVERSATIONS, ids=[c[0][:20] for c in CONVERSATIONS])
async def test_real_turns_conform_to_the_typed_record_and_state(
    app: App, memory: MemoryRecorder, texts: list[str]
) -> None:
    conv = app.store.create_conversation("web")[0]
    for n, text in enumerate(texts):
        fresh = app.store.get_conversation(conv.id)
        assert fresh is not None
        await app.agent.handle(fresh, text, f"schema-{n}")
    assert len(memory.turns) == len(texts)
    for record in memory.turns:
        assert problems(record, TurnRecord) == []
    stored = app.store.get_conversation(conv.id)
    assert stored is not None
    assert problems(stored.state, ConversationState, "state") == []
