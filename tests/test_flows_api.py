"""A refund as a flow through the REST API on the sample pack, with test tools: read-back, yes,
no, correction; checkpoints; rewind, edit and fork; the staff API's authentication."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import App
from bot.config import Settings
from bot.hookspecs import hookimpl
from bot.recorders import MemoryRecorder
from bot.tools import Tool

ADMIN = "staff-secret-token"
STAFF = {"Authorization": f"Bearer {ADMIN}"}


class GetOrder(Tool):
    name = "orders.get_order"
    description = "Look an order up."
    schema = {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    }

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        return {
            "order_id": arguments["order_id"],
            "amount": "$42.00",
            "method": "store credit",
            "refundable": True,
        }


class Refund(Tool):
    name = "orders.refund"
    description = "Refund an order."
    changes = True
    schema = {
        "type": "object",
        "properties": {
            "order_id": {"type": "string"},
            "amount": {"type": "string"},
            "method": {"type": "string"},
        },
        "required": ["order_id", "amount", "method"],
    }

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(dict(arguments))
        return {"status": "refunded", "note": "refunded"}


class AddSeats(Tool):
    name = "subscriptions.add_seats"
    description = "Change a subscription's seats."
    repeat = True
    schema = {
        "type": "object",
        "properties": {"quantity": {"type": "integer"}, "item": {"type": "string"}},
        "required": ["quantity"],
    }

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}


class ToolPlugin:
    def __init__(self) -> None:
        self.refund = Refund()

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(GetOrder())
        register(self.refund)
        register(AddSeats())


@pytest.fixture
def tools() -> ToolPlugin:
    return ToolPlugin()


@pytest.fixture
async def flow_client(
    settings: Settings, tools: ToolPlugin, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[TestClient, App]]:
    from gatebot_web.server import build_web_app

    # Only the plugins this test means: the catalog's own orders tools must not stand in.
    monkeypatch.setenv("GATEBOT_PLUGINS", "offline,web")
    settings.admin_token = ADMIN
    gb = App(settings, extra_plugins=[tools], recorders=[MemoryRecorder()])
    await gb.start(channels=False)
    try:
        async with TestClient(TestServer(build_web_app(gb), host="127.0.0.1")) as client:
            yield client, gb
    finally:
        await gb.stop()


class Chat:
    def __init__(self, client: TestClient, conv: dict[str, str]) -> None:
        self.client, self.conv, self.n = client, conv, 0

    async def say(self, text: str) -> dict[str, Any]:
        self.n += 1
        resp = await self.client.post(
            f"/api/conversations/{self.conv['id']}/messages",
            json={"text": text, "client_message_id": f"m{self.n}"},
            headers={"Authorization": f"Bearer {self.conv['token']}"},
        )
        assert resp.status == 200, await resp.text()
        body: dict[str, Any] = await resp.json()
        return body


async def start(client: TestClient) -> Chat:
    resp = await client.post("/api/conversations", json={})
    return Chat(client, await resp.json())


def text_of(body: dict[str, Any]) -> str:
    return " ".join(r["text"] for r in body["replies"] if r["type"] == "text")


async def test_refund_reads_back_and_calls_only_after_yes(
    flow_client: tuple[TestClient, App], tools: ToolPlugin
) -> None:
    client, _ = flow_client
    chat = await start(client)
    first = await chat.say("I want a refund for my order")
    assert first["turn"]["flow"]["name"] == "refund"
    assert first["turn"]["flow"]["step"] == "ask_order"
    assert "order number" in text_of(first).lower()
    second = await chat.say("order 1042")
    readback = text_of(second)
    assert readback == (
        "Just to confirm, I'll refund order 1042 (amount: $42.00, method: store credit). "
        "Shall I go ahead?"
    )
    assert second["turn"]["move"]["name"] == "confirm"
    assert [s["step"] for s in second["turn"]["flow"]["steps"]] == [
        "ask_order",
        "lookup",
        "eligibility",
        "refund",
    ]
    assert {
        "slot": "amount",
        "value": "$42.00",
        "source": "system",
        "outcome": "act",
        "rejected": [],
    } in second["turn"]["values"]
    assert tools.refund.calls == []
    third = await chat.say("yes please")
    assert tools.refund.calls == [
        {"order_id": "1042", "amount": "$42.00", "method": "store credit"}
    ]
    assert "is refunded" in text_of(third)
    assert third["turn"]["flow"]["status"] == "done"
    events = [(e["tool"], e["event"]) for e in third["turn"]["tools"]]
    assert ("orders.refund", "finished") in events


async def test_a_no_leaves_the_order_untouched(
    flow_client: tuple[TestClient, App], tools: ToolPlugin
) -> None:
    client, _ = flow_client
    chat = await start(client)
    await chat.say("I want a refund for order 1042")
    body = await chat.say("no")
    assert tools.refund.calls == []
    assert "haven't refunded" in text_of(body)
    assert {
        "tool": "orders.refund",
        "event": "declined",
        "detail": {"reason": "the customer said no to the read-back; nothing was changed"},
    } in body["turn"]["tools"]
    assert body["turn"]["flow"]["status"] == "done"


async def test_a_correction_reads_back_again_with_the_new_value(
    flow_client: tuple[TestClient, App], tools: ToolPlugin
) -> None:
    client, _ = flow_client
    chat = await start(client)
    await chat.say("I want a refund for order 1042")
    again = await chat.say("no, to my card")
    assert "method: card" in text_of(again) and "Shall I go ahead?" in text_of(again)
    assert tools.refund.calls == []
    await chat.say("yes")
    assert tools.refund.calls == [{"order_id": "1042", "amount": "$42.00", "method": "card"}]


async def test_corrections_are_bounded_then_a_person_takes_over(
    flow_client: tuple[TestClient, App], tools: ToolPlugin
) -> None:
    client, _ = flow_client
    chat = await start(client)
    await chat.say("I want a refund for order 1042")
    await chat.say("no, to my card")
    await chat.say("no, bank transfer")
    last = await chat.say("no, store credit")
    assert last["turn"]["move"]["name"] == "handoff" and tools.refund.calls == []
    assert last["turn"]["flow"]["status"] == "handed_off"


async def test_checkpoints_rewind_edit_and_fork_leave_the_original_unchanged(
    flow_client: tuple[TestClient, App], tools: ToolPlugin
) -> None:
    client, gb = flow_client
    chat = await start(client)
    await chat.say("I want a refund for order 1042")
    resp = await client.get(f"/api/staff/runs?conversation={chat.conv['id']}", headers=STAFF)
    (run,) = (await resp.json())["runs"]
    cps = await (await client.get(f"/api/staff/runs/{run['id']}/checkpoints", headers=STAFF)).json()
    assert [c["step"] for c in cps["checkpoints"]] == ["ask_order", "lookup", "eligibility"]
    await chat.say("no")
    cps = await (await client.get(f"/api/staff/runs/{run['id']}/checkpoints", headers=STAFF)).json()
    assert [c["step"] for c in cps["checkpoints"]] == [
        "ask_order",
        "lookup",
        "eligibility",
        "refund",
        "done",
    ]
    assert cps["run"]["schedule"] == [
        "ask_order@1",
        "lookup@1",
        "eligibility@1",
        "not_eligible@1",
        "refund@1",
        "done@1",
    ]
    lookup = cps["checkpoints"][1]
    assert lookup["input"]["values"]["order_id"] == "1042"
    assert lookup["output"]["result"]["amount"] == "$42.00"
    before = list(gb.store.iter_checkpoint_rows(run["id"]))

    edited = {**lookup["output"], "result": {**lookup["output"]["result"], "amount": "$40.00"}}
    resp = await client.post(
        f"/api/staff/runs/{run['id']}/fork",
        headers=STAFF,
        json={"at_step": "lookup", "output": edited},
    )
    assert resp.status == 201, await resp.text()
    forked = await resp.json()
    assert forked["run"]["parent_run_id"] == run["id"]
    assert forked["run"]["allow_side_effects"] is False
    assert [c["step"] for c in forked["checkpoints"]] == ["ask_order", "lookup"]
    assert forked["checkpoints"][1]["edited"] is True
    # The conversation continues on the fork: the read-back shows the edited amount, and the
    # change runs dry there.
    body = await chat.say("ok")
    assert "amount: $40.00" in text_of(body)
    assert body["turn"]["flow"]["run"] == forked["run"]["id"]
    done = await chat.say("yes")
    assert tools.refund.calls == []
    assert "dry run" in text_of(done)
    assert list(gb.store.iter_checkpoint_rows(run["id"])) == before
    fork_cps = gb.store.checkpoints(forked["run"]["id"])
    assert [c.step_id for c in fork_cps] == ["ask_order", "lookup", "eligibility", "refund", "done"]
    assert fork_cps[3].output["status"] == "dry_run"


async def test_staff_api_needs_the_staff_token(
    flow_client: tuple[TestClient, App], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, gb = flow_client
    chat = await start(client)
    customer = {"Authorization": f"Bearer {chat.conv['token']}"}
    assert (await client.get("/api/staff/flows", headers=customer)).status == 401
    assert (await client.get("/api/staff/flows")).status == 401
    listed = await (await client.get("/api/staff/flows", headers=STAFF)).json()
    assert {f["name"] for f in listed["flows"]} == {"add_seats", "demo", "refund"}
    shown = await (await client.get("/api/staff/flows/refund", headers=STAFF)).json()
    assert shown["definition"]["format"] == "gatebot-flow"
    gb.settings.admin_token = None
    monkeypatch.delenv("GATEBOT_ADMIN_TOKEN", raising=False)
    off = await client.get("/api/staff/flows", headers=STAFF)
    assert off.status == 403
    assert (await off.json())["error"]["code"] == "staff_api_off"


async def test_repeat_step_makes_each_change_and_can_undo_it(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    chat = await start(client)
    first = await chat.say("I'd like to add seats: 5 more please")
    assert first["turn"]["flow"]["name"] == "add_seats"
    assert text_of(first).startswith("Added 5 seats.")
    undo = await chat.say("undo")
    assert text_of(undo).startswith("Removed 5 seats.")
    finished = await chat.say("done")
    assert "All set" in text_of(finished)
    calls = [e["detail"] for e in finished["turn"]["tools"]]
    assert calls == []  # done makes no call
