"""The catalog's tools end to end: a loopback server stands in for the API and records every
request it receives. Adversarial calls, as a model would propose them, are refused before any
request; legitimate ones arrive with the credential; the credential shows up nowhere else."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from gatebot_catalog.client import CatalogClient
from gatebot_catalog.spec import load_catalog
from gatebot_catalog.tools import build_tools, grant_ownership, owned_from

from bot.app import App
from bot.config import Settings
from bot.extend.tool import ToolRegistry, ToolRunner

ACME = Path(__file__).resolve().parent.parent / "knowledge" / "acme"

# Deliberately loose parameter schemas (plain strings): the URL checks, not a pattern, must refuse.
CATALOG = """\
apis:
  - name: shop
    description: a stand-in shop
    base_url: {base}/api
    auth: {{type: bearer, env: SHOP_TOKEN}}
    endpoints:
      - id: get_order
        method: GET
        path: /orders/{{order_id}}
        description: one order, by number and email
        params:
          order_id: {{in: path, schema: {{type: string}}}}
          email: {{in: query, schema: {{type: string}}}}
        owns: order_id
      - id: refund
        method: POST
        path: /orders/{{order_id}}/refund
        description: refund an order
        params:
          order_id: {{in: path, schema: {{type: string}}}}
          method: {{in: body, required: true, schema: {{type: string}}}}
        changes: true
        ownership: order_id
        readback: "refund order {{order_id}} (amount: {{amount}}, method: {{method}})"
      - id: slow
        method: GET
        path: /slow
        description: never answers in time
        timeout_s: 0.3
"""


@dataclass
class Recorder:
    requests: list[dict[str, Any]] = field(default_factory=list)


SEEN = web.AppKey("seen", Recorder)


async def _handle(request: web.Request) -> web.StreamResponse:
    seen = request.app[SEEN]
    body = await request.text()
    seen.requests.append(
        {
            "method": request.method,
            "path": request.raw_path,
            "headers": dict(request.headers),
            "body": body,
        }
    )
    tail = request.match_info["tail"].removeprefix("api/")
    if tail == "orders/500":
        return web.json_response({"error": {"message": "database on fire"}}, status=500)
    if tail == "orders/404":
        return web.json_response({"error": {"message": "no such order"}}, status=404)
    if tail == "orders/302":
        raise web.HTTPFound("http://evil.example/steal")
    if tail == "orders/big":
        return web.json_response({"lines": ["x" * 100] * 100})
    if tail == "orders/echo":  # a careless service that echoes the request headers back
        return web.json_response({"you_sent": dict(request.headers)})
    if tail == "slow":
        await asyncio.sleep(5)
    order_id = tail.split("/")[1] if tail.startswith("orders/") else "?"
    if tail.endswith("/refund"):
        return web.json_response({"status": "refunded", **json.loads(body or "{}")})
    return web.json_response({"order_id": order_id, "amount": "42.00"})


@pytest.fixture
async def stand_in() -> AsyncIterator[tuple[str, Recorder]]:
    app = web.Application()
    app[SEEN] = Recorder()
    app.router.add_route("*", "/{tail:.*}", _handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        yield str(server.make_url("")).rstrip("/"), app[SEEN]
    finally:
        await server.close()


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> str:
    value = "sk-test-" + secrets.token_hex(12)
    monkeypatch.setenv("SHOP_TOKEN", value)
    return value


@pytest.fixture
async def tools(
    tmp_path: Path, stand_in: tuple[str, Recorder]
) -> AsyncIterator[tuple[ToolRunner, CatalogClient, list[dict[str, Any]]]]:
    base, _ = stand_in
    (tmp_path / "apis.yaml").write_text(CATALOG.format(base=base), encoding="utf-8")
    catalog = load_catalog(tmp_path)
    assert catalog is not None
    client = CatalogClient()
    registry = ToolRegistry()
    for tool in build_tools(catalog, client):
        registry.add(tool)
    published: list[dict[str, Any]] = []
    try:
        yield ToolRunner(registry, published.append), client, published
    finally:
        await client.close()


ATTACKS: list[tuple[str, dict[str, Any]]] = [
    # through catalog.call, as a model would propose
    ("catalog.call", {"endpoint": "shop.get_order", "arguments": {"order_id": "../admin"}}),
    ("catalog.call", {"endpoint": "shop.get_order", "arguments": {"order_id": "1/../../x"}}),
    ("catalog.call", {"endpoint": "shop.get_order", "arguments": {"order_id": "1%2f..%2fx"}}),
    ("catalog.call", {"endpoint": "shop.get_order", "arguments": {"order_id": "1%2F..%2Fx"}}),
    (
        "catalog.call",
        {"endpoint": "shop.get_order", "arguments": {"order_id": "http://evil.example"}},
    ),
    ("catalog.call", {"endpoint": "shop.get_order", "arguments": {"order_id": "x@evil.example"}}),
    (
        "catalog.call",
        {"endpoint": "shop.get_order", "arguments": {"order_id": "1\r\nX-Injected: yes"}},
    ),
    (
        "catalog.call",
        {"endpoint": "shop.get_order", "arguments": {"order_id": "1%0D%0AX-Injected: yes"}},
    ),
    (
        "catalog.call",
        {
            "endpoint": "shop.get_order",
            "arguments": {"order_id": "1", "email": "a@b.c\r\nX-Injected: yes"},
        },
    ),
    ("catalog.call", {"endpoint": "shop.get_order", "arguments": {"order_id": "1", "admin": "1"}}),
    (
        "catalog.call",
        {
            "endpoint": "shop.get_order",
            "arguments": {"order_id": "1", "Authorization": "Bearer mine"},
        },
    ),
    ("catalog.call", {"endpoint": "shop.delete_all", "arguments": {}}),
    ("catalog.call", {"endpoint": "evil.get_order", "arguments": {"order_id": "1"}}),
    ("catalog.call", {"endpoint": "https://evil.example/x", "arguments": {}}),
    ("catalog.call", {"endpoint": "catalog.call", "arguments": {"endpoint": "shop.get_order"}}),
    (
        "catalog.call",
        {"endpoint": "shop.refund", "arguments": {"order_id": "1042", "method": "card"}},
    ),
    # straight to the endpoint tools
    ("shop.get_order", {"order_id": "..\\..\\etc"}),
    ("shop.get_order", {"order_id": "1?x=1#"}),
    ("shop.refund", {"order_id": "1043", "method": "card"}),  # not this conversation's
    ("shop.refund", {"order_id": "1042", "method": "card", "amount": 999}),
    ("shop.delete_all", {}),
]


async def test_adversarial_calls_are_refused_and_no_request_leaves(
    tools: tuple[ToolRunner, CatalogClient, list[dict[str, Any]]],
    stand_in: tuple[str, Recorder],
    secret: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    run, _, published = tools
    _, seen = stand_in
    caplog.set_level(logging.DEBUG)
    context: dict[str, Any] = {"conversation_id": "c1", "owned": {"order_id": ["1042"]}}
    events: list[dict[str, Any]] = []
    outcomes = [await run.call(name, args, context, events=events) for name, args in ATTACKS]
    for (name, args), out in zip(ATTACKS, outcomes, strict=True):
        assert out.status == "refused", (name, args, out)
        assert out.reason and out.events[-1]["event"] == "refused"
    assert seen.requests == []

    # A legitimate lookup reaches the service, with the credential the runtime added.
    lookup = await run.call(
        "catalog.call",
        {"endpoint": "shop.get_order", "arguments": {"order_id": "1043", "email": "sam@x.io"}},
        context,
        events=events,
    )
    assert lookup.ok and lookup.result is not None
    assert lookup.result["data"] == {"order_id": "1043", "amount": "42.00"}
    assert lookup.result["amount"] == "42.00" and "window" not in lookup.result
    assert [r["path"] for r in seen.requests] == ["/api/orders/1043?email=sam%40x.io"]
    assert seen.requests[0]["headers"]["Authorization"] == f"Bearer {secret}"
    # ... and made the order this conversation's, so its refund is now allowed once confirmed.
    assert context["owned"]["order_id"] == ["1042", "1043"]
    unconfirmed = await run.call(
        "shop.refund", {"order_id": "1043", "method": "card"}, context, events=events
    )
    assert unconfirmed.status == "refused" and len(seen.requests) == 1
    refund = await run.call(
        "catalog.call",
        {"endpoint": "shop.refund", "arguments": {"order_id": "1043", "method": "card"}},
        context,
        confirmed=True,
        events=events,
    )
    assert refund.ok and refund.result and refund.result["data"]["status"] == "refunded"
    assert seen.requests[-1]["path"] == "/api/orders/1043/refund"
    assert json.loads(seen.requests[-1]["body"]) == {"method": "card"}

    # The credential appears nowhere but on the wire.
    everything = json.dumps(
        [
            events,
            published,
            [o.result for o in outcomes],
            lookup.result,
            refund.result,
            [o.reason for o in outcomes],
        ]
    )
    assert secret not in everything
    assert secret not in caplog.text


async def test_http_errors_redirects_and_timeouts_fail_honestly(
    tools: tuple[ToolRunner, CatalogClient, list[dict[str, Any]]],
    stand_in: tuple[str, Recorder],
    secret: str,
) -> None:
    run, _, _ = tools
    _, seen = stand_in
    context: dict[str, Any] = {"conversation_id": "c1"}
    failed = await run.call("shop.get_order", {"order_id": "500"}, context)
    assert failed.status == "failed" and "HTTP 500: database on fire" in (failed.reason or "")
    missing = await run.call("shop.get_order", {"order_id": "404"}, context)
    assert missing.status == "failed" and "HTTP 404" in (missing.reason or "")
    assert "order_id" not in context.get("owned", {})  # a failed lookup grants nothing
    moved = await run.call("shop.get_order", {"order_id": "302"}, context)
    assert moved.status == "failed" and "redirect" in (moved.reason or "")
    assert [r["path"] for r in seen.requests] == [
        "/api/orders/500",
        "/api/orders/404",
        "/api/orders/302",
    ]  # the redirect was not followed
    slow = await run.call("shop.slow", {}, context)
    assert slow.status == "failed" and "did not answer" in (slow.reason or "")


async def test_an_echoed_credential_is_redacted(
    tools: tuple[ToolRunner, CatalogClient, list[dict[str, Any]]], secret: str
) -> None:
    run, _, _ = tools
    out = await run.call("shop.get_order", {"order_id": "echo"}, {"conversation_id": "c1"})
    assert out.ok and out.result is not None
    assert secret not in json.dumps(out.result)
    assert out.result["data"]["you_sent"]["Authorization"] == "Bearer [redacted]"


async def test_a_missing_credential_fails_without_a_request(
    tools: tuple[ToolRunner, CatalogClient, list[dict[str, Any]]],
    stand_in: tuple[str, Recorder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run, _, _ = tools
    monkeypatch.delenv("SHOP_TOKEN", raising=False)
    out = await run.call("shop.get_order", {"order_id": "1"}, {})
    assert out.status == "failed" and "SHOP_TOKEN is not set" in (out.reason or "")
    assert stand_in[1].requests == []


async def test_a_large_answer_is_kept_whole_and_read_by_windows(
    tools: tuple[ToolRunner, CatalogClient, list[dict[str, Any]]], secret: str
) -> None:
    run, _, _ = tools
    out = await run.call("shop.get_order", {"order_id": "big"}, {"conversation_id": "c1"})
    assert out.ok and out.result is not None
    result = out.result
    assert result["complete"] is False and result["data"] is None
    total = result["total"]
    assert total > result["window"]["length"]
    text, offset = "", 0
    while offset < total:  # bounded: each window moves forward
        part = await run.call(
            "catalog.read_result",
            {"result_id": result["result_id"], "offset": offset, "length": 1500},
            {"conversation_id": "c1"},
        )
        assert part.ok and part.result is not None and part.result["total"] == total
        text += part.result["content"]
        offset += part.result["length"]
    assert json.loads(text) == {"lines": ["x" * 100] * 100}
    other = await run.call(
        "catalog.read_result", {"result_id": result["result_id"]}, {"conversation_id": "c2"}
    )
    assert other.status == "failed"  # another conversation cannot read it


async def test_inspect_lists_endpoints_without_base_url_or_credential(
    tools: tuple[ToolRunner, CatalogClient, list[dict[str, Any]]], secret: str
) -> None:
    run, _, _ = tools
    out = await run.call("catalog.inspect", {}, {})
    assert out.ok and out.result is not None
    (api,) = out.result["apis"]
    names = [e["name"] for e in api["endpoints"]]
    assert names == ["shop.get_order", "shop.refund", "shop.slow"]
    refund = api["endpoints"][1]
    assert refund["changes"] is True and refund["ownership"] == "order_id"
    assert refund["schema"]["required"] == ["method", "order_id"]
    text = json.dumps(out.result)
    assert "127.0.0.1" not in text and "SHOP_TOKEN" not in text and secret not in text


def test_ownership_is_rebuilt_from_stored_results() -> None:
    results = [{"owns": {"order_id": "1042"}}, None, {"data": {}}, {"owns": {"order_id": 1042}}]
    assert owned_from(results) == {"order_id": ["1042"]}
    context: dict[str, Any] = {}
    grant_ownership(context, {"owns": {"subscription_id": "sub_1"}})
    assert context == {"owned": {"subscription_id": ["sub_1"]}}


async def test_the_sample_pack_registers_the_catalog_tools(tmp_path: Path) -> None:
    app = App(Settings(pack=ACME, data_dir=tmp_path, recorders=[]))
    try:
        names = {t.name for t in app.tools}
        assert {
            "orders.lookup_order",
            "orders.refund_order",
            "orders.lookup_seats",
            "orders.change_seats",
            "orders.change_items",
            "catalog.inspect",
            "catalog.call",
            "catalog.read_result",
        } <= names
        refund = app.tools.get("orders.refund_order")
        seats = app.tools.get("orders.change_seats")
        assert refund is not None and refund.changes and refund.ownership == "order_id"
        assert seats is not None and seats.repeat and not seats.changes
        text = refund.readback_text(  # type: ignore[attr-defined]
            {"order_id": "1042", "amount": "$42.00", "method": "store credit"}
        )
        assert text == "refund order 1042 (amount: $42.00, method: store credit)"
    finally:
        await app.stop()


def test_the_catalog_command_lists_tools_and_points_at_errors(tmp_path: Path) -> None:
    from click.testing import CliRunner
    from gatebot_catalog.cli import command

    ok = CliRunner().invoke(command, [str(ACME)])
    assert ok.exit_code == 0 and "orders.refund_order  POST" in ok.output
    assert "changes, owned order_id" in ok.output
    rows = json.loads(CliRunner().invoke(command, [str(ACME), "--json"]).output)
    refund = next(r for r in rows if r["tool"] == "orders.refund_order")
    assert refund["flags"] == ["changes", "owned order_id"] and refund["method"] == "POST"
    (tmp_path / "apis.yaml").write_text(
        "apis:\n  - name: x\n    base_url: https://x.example\n    endpoints:\n"
        '      - {id: a, method: GET, path: "/a/{b}", description: a}\n',
        encoding="utf-8",
    )
    bad = CliRunner().invoke(command, [str(tmp_path)])
    assert bad.exit_code == 1
    assert "apis.yaml:5 [apis[0].endpoints[0].path]: {b} has no params entry" in bad.output


def test_a_parameter_tied_to_an_unknown_slot_stops_the_build(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from gatebot_catalog import catalog_tools

    from bot.errors import ConfigError

    (tmp_path / "apis.yaml").write_text(
        "apis:\n  - name: x\n    base_url: https://x.example\n    endpoints:\n"
        "      - id: a\n        method: GET\n        path: /a\n        description: a\n"
        "        params: {who: {in: query, value: mail, schema: {type: string}}}\n",
        encoding="utf-8",
    )
    fake = SimpleNamespace(pack=SimpleNamespace(root=tmp_path, slots=[]))
    with pytest.raises(ConfigError, match="'mail' is not a slot"):
        catalog_tools(fake)
