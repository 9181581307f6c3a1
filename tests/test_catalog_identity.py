"""A catalog parameter tied to the verified identity (``value: identity.user_id``): the tool
fills it from the trusted context entry only, whatever a model or a customer proposes, and
refuses the call, with no request, when the conversation has no verified id."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from gatebot_catalog import slot_errors
from gatebot_catalog.client import CatalogClient
from gatebot_catalog.spec import load_catalog
from gatebot_catalog.tools import build_tools

from bot.errors import PackErrors
from bot.extend.tool import ToolRegistry, ToolRunner, identity_context

CATALOG = """\
apis:
  - name: shop
    description: a stand-in shop
    base_url: {base}/api
    endpoints:
      - id: my_orders
        method: GET
        path: /orders
        description: the signed-in customer's orders
        params:
          customer: {{in: query, value: identity.user_id, schema: {{type: string}}}}
          status: {{in: query, schema: {{type: string}}}}
"""

Seen = list[dict[str, str]]
SEEN = web.AppKey("seen", list)


async def _orders(request: web.Request) -> web.Response:
    request.app[SEEN].append(dict(request.query))
    return web.json_response({"orders": [], "customer": request.query.get("customer")})


@pytest.fixture
async def runner(tmp_path: Path) -> AsyncIterator[tuple[ToolRunner, Seen]]:
    app = web.Application()
    seen: Seen = []
    app[SEEN] = seen
    app.router.add_get("/api/orders", _orders)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    base = str(server.make_url("")).rstrip("/")
    (tmp_path / "apis.yaml").write_text(CATALOG.format(base=base), encoding="utf-8")
    catalog = load_catalog(tmp_path)
    assert catalog is not None
    client = CatalogClient()
    registry = ToolRegistry()
    for tool in build_tools(catalog, client):
        registry.add(tool)
    try:
        yield ToolRunner(registry), seen
    finally:
        await client.close()
        await server.close()


PROPOSED: list[tuple[str, dict[str, Any]]] = [
    ("shop.my_orders", {"customer": "web:mallory", "status": "open"}),
    (
        "catalog.call",
        {"endpoint": "shop.my_orders", "arguments": {"customer": "web:mallory", "status": "open"}},
    ),
]


@pytest.mark.parametrize(("name", "arguments"), PROPOSED)
async def test_a_proposed_identity_is_ignored_and_the_verified_one_sent(
    runner: tuple[ToolRunner, Seen], name: str, arguments: dict[str, Any]
) -> None:
    tools, seen = runner
    outcome = await tools.call(name, arguments, identity_context("web:alice"))
    assert outcome.ok, outcome.reason
    assert seen == [{"customer": "web:alice", "status": "open"}]
    assert any(e["event"] == "ignored" for e in outcome.events)


async def test_without_a_verified_id_the_call_is_refused_and_nothing_sent(
    runner: tuple[ToolRunner, Seen],
) -> None:
    tools, seen = runner
    for context in ({}, identity_context(None)):
        outcome = await tools.call("shop.my_orders", {"customer": "web:alice"}, context)
        assert outcome.status == "refused"
        assert "needs a verified identity" in outcome.reason
    assert seen == []


async def test_the_model_never_sees_the_identity_parameter(
    runner: tuple[ToolRunner, Seen],
) -> None:
    tools, _ = runner
    tool = tools.registry.get("shop.my_orders")
    assert tool is not None
    assert set(tool.describe()["schema"]["properties"]) == {"status"}


def _pack(tmp_path: Path, param: str) -> Path:
    (tmp_path / "apis.yaml").write_text(
        "apis:\n  - name: x\n    base_url: https://x.example\n    endpoints:\n"
        "      - id: a\n        method: GET\n        path: /a\n        description: a\n"
        f"        params: {{who: {{in: query, {param}}}}}\n",
        encoding="utf-8",
    )
    return tmp_path


def test_check_accepts_an_identity_parameter_without_a_slot(tmp_path: Path) -> None:
    catalog = load_catalog(_pack(tmp_path, "value: identity.user_id, schema: {type: string}"))
    assert catalog is not None
    pack = SimpleNamespace(root=tmp_path, slots=[])
    assert slot_errors(catalog, pack) == []


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("value: identity.email, schema: {type: string}", "value"),
        ("value: identity.user_id, schema: {type: integer}", "identity.user_id is a string"),
    ],
)
def test_check_refuses_a_wrong_identity_declaration(
    tmp_path: Path, param: str, message: str
) -> None:
    with pytest.raises(PackErrors, match=message):
        load_catalog(_pack(tmp_path, param))


@pytest.mark.parametrize("verified", ["slack:U123", None])
def test_a_flow_step_passes_the_conversations_verified_id_only(verified: str | None) -> None:
    from bot.flows.steps.base import StepHost

    # The values a customer typed (a user_id among them) never become the identity.
    t = SimpleNamespace(
        conversation_id="c1",
        state={"values": {"user_id": "web:mallory"}},
        context=lambda _text: {"values": {"user_id": "web:mallory"}},
        turn=SimpleNamespace(conversation=SimpleNamespace(verified_user_id=verified)),
    )
    host = StepHost.__new__(StepHost)
    assert host.tool_context(t)["identity"] == {"user_id": verified}  # type: ignore[arg-type]


async def test_the_turns_tool_loop_passes_the_identity_it_was_given() -> None:
    from bot.extend.provider import ModelProvider, Prompt, Response, ToolCall
    from bot.extend.tool import Tool
    from bot.turn.drafting import Drafted, ToolLoop, _through_tools

    seen: list[Any] = []

    class WhoAmI(Tool):
        name = "spy.whoami"
        schema = {"type": "object", "properties": {}, "additionalProperties": False}

        async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
            seen.append(context.get("identity"))
            return {"ok": True}

    class CallsOnce(ModelProvider):
        name = "once"
        calls_tools = True

        async def execute(self, prompt: Prompt) -> Response:
            if any(m["role"] == "tool" for m in prompt.messages):
                return Response("done")
            return Response("", tool_calls=[ToolCall("c1", "spy.whoami", {})])

    registry = ToolRegistry()
    registry.add(WhoAmI())
    loop = ToolLoop(ToolRunner(registry), 2, identity_context("discord:42"))
    prompt = Prompt("reply", "system", [{"role": "user", "content": "q"}])
    text, _ = await _through_tools(CallsOnce("test"), prompt, loop, Drafted("q"))
    assert (text, seen) == ("done", [{"user_id": "discord:42"}])


async def test_anonymous_omit_leaves_the_identity_out_instead_of_refusing(
    tmp_path: Path,
) -> None:
    app = web.Application()
    seen: Seen = []
    app[SEEN] = seen
    app.router.add_get("/api/orders", _orders)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    base = str(server.make_url("")).rstrip("/")
    omitting = CATALOG.replace(
        "value: identity.user_id,", "value: identity.user_id, anonymous: omit,"
    )
    (tmp_path / "apis.yaml").write_text(omitting.format(base=base), encoding="utf-8")
    catalog = load_catalog(tmp_path)
    assert catalog is not None
    client = CatalogClient()
    registry = ToolRegistry()
    for tool in build_tools(catalog, client):
        registry.add(tool)
    try:
        tools = ToolRunner(registry)
        anonymous = await tools.call("shop.my_orders", {"customer": "web:alice"}, {})
        verified = await tools.call("shop.my_orders", {}, identity_context("web:bob"))
        assert anonymous.ok and verified.ok
        assert seen == [{}, {"customer": "web:bob"}]  # the proposed id dropped, none sent
    finally:
        await client.close()
        await server.close()


def test_check_refuses_anonymous_on_a_parameter_not_tied_to_the_identity(tmp_path: Path) -> None:
    with pytest.raises(PackErrors, match="anonymous applies to a value: identity"):
        load_catalog(_pack(tmp_path, "anonymous: omit, schema: {type: string}"))
