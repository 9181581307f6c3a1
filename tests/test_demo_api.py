"""The sample pack's demo orders API, served by the app's own web server under /demo-api, and
reached through the catalog's tools the way a flow would call them."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from gatebot_demo_api import demo_for

from bot.app import App

AUTH = {"Authorization": "Bearer acme-demo-token"}  # the documented demo default


@pytest.fixture(autouse=True)
def _demo_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACME_ORDERS_TOKEN", raising=False)
    monkeypatch.delenv("ACME_ORDERS_URL", raising=False)


async def test_the_demo_api_is_marked_and_needs_its_token(client: TestClient) -> None:
    index = await client.get("/demo-api")
    assert index.status == 200 and (await index.json())["demo"] is True
    anonymous = await client.get("/demo-api/orders/1042", params={"email": "sam@example.com"})
    assert anonymous.status == 401
    wrong = await client.get(
        "/demo-api/orders/1042",
        params={"email": "sam@example.com"},
        headers={"Authorization": "Bearer guess"},
    )
    assert wrong.status == 401


async def test_orders_answer_only_their_owner_and_refund_once(client: TestClient) -> None:
    mine = await client.get(
        "/demo-api/orders/1042", params={"email": "Sam@Example.com"}, headers=AUTH
    )
    body = await mine.json()
    assert mine.status == 200 and body["amount"] == "42.00" and body["refundable"] is True
    theirs = await client.get(
        "/demo-api/orders/1044", params={"email": "sam@example.com"}, headers=AUTH
    )
    assert theirs.status == 404  # a wrong email reads like a missing order
    old = await client.get(
        "/demo-api/orders/1043", params={"email": "sam@example.com"}, headers=AUTH
    )
    assert (await old.json())["refundable"] is False
    too_late = await client.post(
        "/demo-api/orders/1043/refund", json={"method": "card"}, headers=AUTH
    )
    assert too_late.status == 409 and "refund window" in (await too_late.json())["error"]["message"]
    bad = await client.post("/demo-api/orders/1042/refund", json={"method": "cash"}, headers=AUTH)
    assert bad.status == 400
    done = await client.post(
        "/demo-api/orders/1042/refund", json={"method": "store credit"}, headers=AUTH
    )
    assert done.status == 200 and (await done.json())["status"] == "refunded"
    again = await client.post("/demo-api/orders/1042/refund", json={"method": "card"}, headers=AUTH)
    assert again.status == 409


async def test_seats_go_up_and_down_within_limits(client: TestClient) -> None:
    path = "/demo-api/subscriptions/sub_acme1/seats"
    seats = await client.get(path, params={"email": "sam@example.com"}, headers=AUTH)
    assert (await seats.json())["seats"] == 5
    up = await client.post(path, json={"delta": 2}, headers=AUTH)
    assert (await up.json())["seats"] == 7
    down = await client.post(path, json={"delta": -7}, headers=AUTH)
    assert down.status == 409  # a subscription keeps at least one seat


async def test_the_catalog_tools_reach_the_demo_api_with_every_check(
    app: App, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_ORDERS_URL", str(client.make_url("/demo-api")))
    run = app.tool_runner("conv-1")
    email = "sam@example.com"
    context: dict[str, Any] = {"conversation_id": "conv-1", "owned": {}, "values": {"email": email}}
    # The lookup's email must be the conversation's own: an address a model made up is refused.
    guessed = await run.call(
        "orders.lookup_order", {"order_id": "1044", "email": "alex@example.com"}, context
    )
    assert guessed.status == "refused" and "conversation's email" in (guessed.reason or "")
    # Not looked up yet: the conversation owns no order, so no refund, confirmed or not.
    early = await run.call(
        "orders.refund_order", {"order_id": "1042", "method": "card"}, context, confirmed=True
    )
    assert early.status == "refused" and "does not belong" in (early.reason or "")
    someone_elses = await run.call(
        "orders.lookup_order", {"order_id": "1044", "email": email}, context
    )
    assert someone_elses.status == "failed" and "HTTP 404" in (someone_elses.reason or "")
    lookup = await run.call(
        "catalog.call",
        {"endpoint": "orders.lookup_order", "arguments": {"order_id": "1042", "email": email}},
        context,
    )
    assert lookup.ok and lookup.result is not None
    # The answer's fields sit at the top of the result, where a flow's fills and routes read them.
    assert lookup.result["amount"] == "42.00"
    assert lookup.result["default_refund_method"] == "store credit"
    assert lookup.result["refundable"] is True and lookup.result["data"]["order_id"] == "1042"
    assert context["owned"] == {"order_id": ["1042"]}
    unconfirmed = await run.call(
        "orders.refund_order", {"order_id": "1042", "method": "card"}, context
    )
    assert unconfirmed.status == "refused" and "confirms" in (unconfirmed.reason or "")
    wrong_amount = await run.call(
        "orders.refund_order",
        {"order_id": "1042", "amount": "420.00", "method": "card"},
        context,
        confirmed=True,
    )
    assert wrong_amount.status == "failed" and "is 42.00" in (wrong_amount.reason or "")
    refund = await run.call(
        "orders.refund_order",
        {"order_id": "1042", "amount": "42.00", "method": "card"},
        context,
        confirmed=True,
    )
    assert refund.ok and refund.result and refund.result["status"] == "refunded"
    theirs = await run.call(
        "orders.refund_order", {"order_id": "1044", "method": "card"}, context, confirmed=True
    )
    assert theirs.status == "refused"
    # A repeat tool runs at once (no confirmation), on an owned subscription.
    await run.call("orders.lookup_seats", {"subscription_id": "sub_acme1", "email": email}, context)
    more = await run.call(
        "orders.change_seats", {"subscription_id": "sub_acme1", "delta": 3}, context
    )
    assert more.ok and more.result and more.result["data"]["seats"] == 8


async def test_a_set_token_replaces_the_demo_default_on_both_sides(
    app: App, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server took its token at start (the default); a client with another token is refused.
    monkeypatch.setenv("ACME_ORDERS_URL", str(client.make_url("/demo-api")))
    monkeypatch.setenv("ACME_ORDERS_TOKEN", "rotated-token")
    out = await app.tool_runner().call(
        "orders.lookup_order",
        {"order_id": "1042", "email": "sam@example.com"},
        {"values": {"email": "sam@example.com"}},
    )
    assert out.status == "failed" and "HTTP 401" in (out.reason or "")
    assert "rotated-token" not in str(out.events)
    assert demo_for(app) is not None and demo_for(app).token == "rotated-token"  # type: ignore[union-attr]


def test_no_demo_api_unless_the_pack_declares_one(tmp_path: Path) -> None:
    fake = SimpleNamespace(pack=SimpleNamespace(root=tmp_path))
    assert demo_for(fake) is None
    (tmp_path / "apis.yaml").write_text(
        "apis:\n  - name: real\n    base_url: https://api.example\n    endpoints:\n"
        "      - {id: ping, method: GET, path: /ping, description: ping}\n",
        encoding="utf-8",
    )
    assert demo_for(fake) is None


def test_the_demo_api_is_reached_on_the_apps_own_port(app: App) -> None:
    from gatebot_catalog.urls import base_url

    tool = app.tools.get("orders.lookup_order")
    assert tool is not None
    api = tool.api  # type: ignore[attr-defined]
    assert base_url(api) == f"http://127.0.0.1:{app.settings.port}/demo-api"
