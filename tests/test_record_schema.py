"""The typed turn record (bot.turn.turn.TurnRecord) is exactly the JSON shape DESIGN.md documents,
and the records real turns produce conform to it, key by key and type by type."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import (
    Any,
    Literal,
    NotRequired,
    Required,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from bot.app import App
from bot.cli import cli
from bot.extend.recorder import MemoryRecorder
from bot.turn import schema as schema_module
from bot.turn.agent import Agent
from bot.turn.record import RECORD_KEYS, new_record
from bot.turn.schema import ADDED_LATER, SCHEMA_FILE, record_schema, render, validator, violations
from bot.turn.turn import ConversationState, TurnRecord
from tests import record_check
from tests.conftest import ROOT

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


# -- the JSON Schema (docs/turn-record.schema.json) ------------------------------------------------


def _without(record: dict[str, Any], dotted: str) -> None:
    *parents, last = dotted.split(".")
    for key in parents:
        record = record[key]
    del record[last]


def test_the_committed_schema_is_the_generated_one() -> None:
    """Regenerate with: gatebot record-schema --out docs/turn-record.schema.json"""
    committed = (ROOT / SCHEMA_FILE).read_text(encoding="utf-8")
    assert committed == render()
    assert json.loads(committed) == record_schema()


def test_the_schema_follows_the_types() -> None:
    Draft202012Validator.check_schema(record_schema())
    schema, defs = record_schema(), record_schema()["$defs"]
    assert schema["required"] == list(DESIGN_KEYS) and schema["additionalProperties"] is False
    calls = defs["ModelCall"]
    assert calls["required"] == ["provider", "model", "purpose", "ms", "tokens_in", "tokens_out"]
    assert {"error", "prompt_sha256", "response"} <= set(calls["properties"])
    assert "reason" in defs["Read"]["properties"] and "reason" not in defs["Read"]["required"]
    assert defs["ScopePart"]["properties"]["score"]["type"] == ["number", "null"]
    # A tool event's detail is the tool's to name; the flow part and timings are open too.
    detail = defs["ToolEvent"]["properties"]["detail"]
    assert detail["type"] == "object" and "additionalProperties" not in detail
    assert schema["properties"]["timings"]["additionalProperties"] == {"type": "number"}


def test_a_new_record_validates() -> None:
    check = validator()
    assert list(violations(check, new_record("c1", 1, "hi", "web", None, "shadow", "web:7"))) == []


def test_a_violation_is_named_by_its_path() -> None:
    record: Any = new_record("c1", 1, "hi", "web", None)
    record["move"]["escalate"] = "yes"
    record["reads"].append({"head": "intent"})
    record["tools"].append({"tool": "t", "event": "finished", "detail": {"call": {"result": 1}}})
    record["model_calls"].append({"provider": "p", "model": "m", "purpose": "reply", "ms": 1.5})
    record["extra"] = 1
    found = list(violations(validator(), record))
    assert "move/escalate: 'yes' is not of type 'boolean'" in found
    assert "reads/0: 'version' is a required property" in found
    assert "model_calls/0: 'tokens_in' is a required property" in found
    assert any(p.startswith("(record): Additional properties") for p in found)
    assert not any(p.startswith("tools") for p in found)  # detail is open


def test_keys_older_records_may_lack_are_in_the_schema_and_its_description() -> None:
    schema = record_schema()
    for dotted in ADDED_LATER:
        record: Any = new_record("c1", 1, "hi", "web", None)
        _without(record, dotted)  # the key exists on a current record ...
        found = list(violations(validator(), record))
        assert found and "is a required property" in found[0]  # ... and the schema requires it
        assert f"`{dotted}`" in schema["description"]


def test_the_suite_validates_every_record_it_produces() -> None:
    assert getattr(Agent._deliver_record, "checks_schema", False)
    bad: Any = new_record("c1", 1, "hi", "web", None)
    bad["seq"] = "one"
    assert record_check.problems_of(bad) == ["seq: 'one' is not of type 'integer'"]
    assert record_check.problems_of({"x": object()})[0].startswith("(record): not JSON")


def test_gatebot_record_schema_prints_and_checks(tmp_path: Path) -> None:
    runner = CliRunner()
    printed = runner.invoke(cli, ["record-schema"])
    assert printed.exit_code == 0 and printed.output == render()
    good = new_record("c1", 1, "hi", "web", None)
    older: Any = new_record("c1", 2, "hi", "web", None)
    _without(older, "message.user")
    log = tmp_path / "turns.jsonl"
    log.write_text(f"{json.dumps(good)}\n\n{json.dumps(older)}\nnot json\n", encoding="utf-8")
    checked = runner.invoke(cli, ["record-schema", "--check", str(log)])
    assert checked.exit_code == 1
    assert "line 3: message: 'user' is a required property" in checked.output
    assert "line 4: not JSON" in checked.output
    assert "3 record(s): 1 conform, 2 break the schema" in checked.output
    log.write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert runner.invoke(cli, ["record-schema", "--check", str(log)]).exit_code == 0


class _Inner(TypedDict):
    """An inner part."""

    kind: Literal["a", "b"]  # which kind
    #: how many, or null
    count: int | None


# The functional form keeps NotRequired real under ``from __future__ import annotations``.
_Outer = TypedDict(  # noqa: UP013
    "_Outer",
    {
        "inner": NotRequired[_Inner],
        "inners": list[_Inner],
        "extra": dict[str, Any] | None,
        "scores": dict[str, float],
    },
)


def test_the_generator_maps_each_type() -> None:
    defs: dict[str, Any] = {}
    outer = schema_module._typeddict(_Outer, defs)
    assert outer["required"] == ["inners", "extra", "scores"]
    assert outer["properties"]["inner"] == {"$ref": "#/$defs/_Inner"}
    assert outer["properties"]["extra"] == {"type": ["object", "null"]}
    assert outer["properties"]["scores"]["additionalProperties"] == {"type": "number"}
    assert defs["_Inner"] == {
        "type": "object",
        "description": "An inner part.",
        "required": ["kind", "count"],
        "properties": {
            "kind": {"description": "which kind", "enum": ["a", "b"]},
            "count": {"description": "how many, or null", "type": ["integer", "null"]},
        },
        "additionalProperties": False,
    }
