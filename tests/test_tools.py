"""The tool lifecycle wrapper: every check runs outside the tool and outside the model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.errors import GatebotError
from bot.extend.tool import Tool, ToolError, ToolRegistry, ToolRunner, window


class Refund(Tool):
    name = "refund"
    schema = {
        "type": "object",
        "properties": {"order_id": {"type": "string", "pattern": "^[0-9]+$"}},
        "required": ["order_id"],
        "additionalProperties": False,
    }
    result_schema = {"type": "object", "required": ["status"]}
    changes = True
    ownership = "order_id"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(arguments)
        if arguments["order_id"] == "500":
            raise ToolError("the orders service answered 500")
        if arguments["order_id"] == "999":
            await asyncio.sleep(5)
        if arguments["order_id"] == "7":
            return {"no": "status"}
        return {"status": "refunded", "note": f"refunded {arguments['order_id']}"}


def runner() -> tuple[Refund, ToolRunner, list[dict[str, Any]]]:
    registry = ToolRegistry()
    tool = Refund()
    registry.add(tool)
    published: list[dict[str, Any]] = []
    return tool, ToolRunner(registry, published.append), published


OWNED = {"owned": {"order_id": ["1042", "500", "999", "7"]}}


async def test_a_confirmed_call_runs_with_every_event_recorded_and_streamed() -> None:
    tool, run, published = runner()
    events: list[dict[str, Any]] = []
    out = await run.call("refund", {"order_id": "1042"}, OWNED, confirmed=True, events=events)
    assert out.ok and out.result == {"status": "refunded", "note": "refunded 1042"}
    assert [e["event"] for e in events] == ["requested", "validated", "started", "finished"]
    assert [e["event"] for e in published] == [e["event"] for e in events]
    assert tool.calls == [{"order_id": "1042"}]


@pytest.mark.parametrize(
    ("arguments", "context", "confirmed", "reason"),
    [
        ({"order_id": "1042"}, OWNED, False, "confirms its read-back"),
        ({"order_id": "1043"}, OWNED, True, "does not belong"),
        ({"order_id": "../1042"}, OWNED, True, "invalid order_id"),
        ({"order_id": "1042", "extra": 1}, OWNED, True, "invalid arguments"),
        ({}, OWNED, True, "invalid arguments"),
    ],
)
async def test_refusals_never_reach_the_tool(
    arguments: dict[str, Any], context: dict[str, Any], confirmed: bool, reason: str
) -> None:
    tool, run, _ = runner()
    out = await run.call("refund", arguments, context, confirmed=confirmed)
    assert out.status == "refused" and reason in (out.reason or "")
    assert out.events[-1]["event"] == "refused"
    assert tool.calls == []


async def test_unknown_tool_dry_run_failure_timeout_and_bad_result() -> None:
    tool, run, _ = runner()
    assert (await run.call("delete_everything", {}, {})).reason == "unknown tool"
    dry = await run.call("refund", {"order_id": "1042"}, OWNED, confirmed=True, dry_run=True)
    assert dry.status == "dry_run" and tool.calls == []
    failed = await run.call("refund", {"order_id": "500"}, OWNED, confirmed=True)
    assert failed.status == "failed" and "500" in (failed.reason or "")
    tool.timeout_s = 0.05
    slow = await run.call("refund", {"order_id": "999"}, OWNED, confirmed=True)
    assert slow.status == "failed" and "timed out" in (slow.reason or "")
    bad = await run.call("refund", {"order_id": "7"}, OWNED, confirmed=True)
    assert bad.status == "failed" and "schema" in (bad.reason or "")


def test_the_registry_refuses_a_tool_without_a_schema() -> None:
    class NoSchema(Tool):
        name = "loose"

        async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
            return {}

    with pytest.raises(GatebotError, match="no argument schema"):
        ToolRegistry().add(NoSchema())


def test_a_window_says_what_is_left() -> None:
    text = "x" * 4500
    first = window(text, 0, 2000)
    assert first["length"] == 2000 and first["total"] == 4500
    last = window(text, 4000, 2000)
    assert last["length"] == 500 and last["content"] == "x" * 500


class Guarded(Refund):
    """A tool with its own check: refuses before running, like the catalog's URL check."""

    name = "guarded"

    def check(self, arguments: dict[str, Any], context: dict[str, Any]) -> str | None:
        return "order 13 is cursed" if arguments["order_id"] == "13" else None


class Alias(Tool):
    """Names another tool, like ``catalog.call``: every check is the named tool's."""

    name = "alias"
    schema = {"type": "object", "properties": {"to": {"type": "string"}, "args": {}}}

    def route(self, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        return str(arguments.get("to")), dict(arguments.get("args") or {})

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("a routing tool never runs itself")


async def test_a_tools_own_check_refuses_before_it_runs() -> None:
    registry = ToolRegistry()
    tool = Guarded()
    registry.add(tool)
    out = await ToolRunner(registry).call(
        "guarded", {"order_id": "13"}, {"owned": {"order_id": ["13"]}}, confirmed=True
    )
    assert out.status == "refused" and out.reason == "order 13 is cursed" and tool.calls == []


async def test_a_routed_call_passes_the_named_tools_checks_confirmation_included() -> None:
    registry = ToolRegistry()
    tool = Refund()
    registry.add(tool)
    registry.add(Alias())
    run = ToolRunner(registry)
    events: list[dict[str, Any]] = []
    refused = await run.call(
        "alias", {"to": "refund", "args": {"order_id": "1042"}}, OWNED, events=events
    )
    assert refused.status == "refused" and "confirms" in (refused.reason or "")
    assert [(e["tool"], e["event"]) for e in events] == [
        ("alias", "requested"),
        ("alias", "routed"),
        ("refund", "requested"),
        ("refund", "refused"),
    ]
    assert [e["event"] for e in refused.events] == [e["event"] for e in events]
    assert tool.calls == []
    ok = await run.call(
        "alias", {"to": "refund", "args": {"order_id": "1042"}}, OWNED, confirmed=True
    )
    assert ok.ok and tool.calls == [{"order_id": "1042"}]
    loop = await run.call("alias", {"to": "alias", "args": {"to": "refund"}}, OWNED, confirmed=True)
    assert loop.status == "refused" and "not a tool" in (loop.reason or "")
    nothing = await run.call("alias", {"to": "nope", "args": {}}, OWNED)
    assert nothing.status == "refused"


async def test_a_schema_is_checked_and_compiled_once_not_per_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every answer turn builds its knowledge tools and calls them: the schemas they share are
    checked the first time only (this was 8 to 13% of the event loop's CPU under load)."""
    import jsonschema

    from bot.extend.retriever import LexicalRetriever
    from bot.packs import load_pack
    from bot.turn.knowledge_tools import SEARCH, knowledge_tools

    retriever = LexicalRetriever(load_pack("knowledge/acme"))
    knowledge_tools(retriever)  # the first build checks the two schemas
    checks: list[object] = []
    original = jsonschema.Draft202012Validator.check_schema
    monkeypatch.setattr(
        jsonschema.Draft202012Validator,
        "check_schema",
        classmethod(lambda cls, schema, **kw: checks.append(schema) or original(schema, **kw)),
    )
    for _ in range(3):
        registry, ledger = knowledge_tools(retriever)
        outcome = await ToolRunner(registry).call(SEARCH, {"query": "free trial", "k": 2}, {})
        assert outcome.ok and len(ledger) > 0
        refused = await ToolRunner(registry).call(SEARCH, {"query": ""}, {})
        assert refused.reason == "invalid query: '' should be non-empty"
    assert checks == []
