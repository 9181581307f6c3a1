"""A refund as a flow through the REST API on the sample pack, calling the demo orders API
through the API catalog: read-back, yes, no, correction; checkpoints; rewind, edit and fork; the
staff API's authentication; a repeat step."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from bot.app import App

ADMIN = "staff-secret-token"
STAFF = {"Authorization": f"Bearer {ADMIN}"}


DEMO_AUTH = {"Authorization": "Bearer acme-demo-token"}


async def order(client: TestClient, order_id: str = "1042") -> dict[str, Any]:
    """The demo order as its API says it is now (status paid or refunded)."""
    resp = await client.get(f"/demo-api/orders/{order_id}?email=sam@example.com", headers=DEMO_AUTH)
    body: dict[str, Any] = await resp.json()
    return body


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


READ_BACK = (
    "Just to confirm, I'll refund order 1042 (amount: $42.00, method: store credit). "
    "Shall I go ahead?"
)


async def to_read_back(chat: Chat) -> dict[str, Any]:
    first = await chat.say("I want a refund for order 1042")
    assert first["turn"]["flow"]["step"] == "ask_email"
    body = await chat.say("sam@example.com")
    assert text_of(body) == READ_BACK
    return body


async def test_refund_reads_back_and_calls_only_after_yes(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    chat = await start(client)
    first = await chat.say("I want a refund for my order")
    assert first["turn"]["flow"]["name"] == "refund"
    assert first["turn"]["flow"]["step"] == "ask_email"
    assert "email" in text_of(first).lower()
    second = await chat.say("sam@example.com")
    assert second["turn"]["flow"]["step"] == "ask_order"
    assert "order number" in text_of(second).lower()
    third = await chat.say("order 1042")
    assert text_of(third) == READ_BACK
    assert third["turn"]["move"]["name"] == "confirm"
    assert [s["step"] for s in third["turn"]["flow"]["steps"]] == [
        "ask_order",
        "lookup",
        "eligibility",
        "refund",
    ]
    assert {
        "slot": "amount",
        "value": "42.00",
        "source": "system",
        "outcome": "act",
        "rejected": [],
    } in third["turn"]["values"]
    assert (await order(client))["status"] == "paid"
    fourth = await chat.say("yes please")
    refunded = await order(client)
    assert refunded["status"] == "refunded" and refunded["refunded_to"] == "store credit"
    assert "is refunded" in text_of(fourth)
    assert fourth["turn"]["flow"]["status"] == "done"
    events = [(e["tool"], e["event"]) for e in fourth["turn"]["tools"]]
    assert ("orders.refund_order", "finished") in events
    # The demo API's token is the runtime's: no turn record ever holds it.
    assert "acme-demo-token" not in json.dumps([first, second, third, fourth])


async def test_a_no_leaves_the_order_untouched(flow_client: tuple[TestClient, App]) -> None:
    client, _ = flow_client
    chat = await start(client)
    await to_read_back(chat)
    body = await chat.say("no")
    assert (await order(client))["status"] == "paid"
    assert "haven't refunded" in text_of(body)
    assert {
        "tool": "orders.refund_order",
        "event": "declined",
        "detail": {"reason": "the customer said no to the read-back; nothing was changed"},
    } in body["turn"]["tools"]
    assert body["turn"]["flow"]["status"] == "done"


async def test_a_correction_reads_back_again_with_the_new_value(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    chat = await start(client)
    await to_read_back(chat)
    again = await chat.say("no, to my card")
    assert "method: card" in text_of(again) and "Shall I go ahead?" in text_of(again)
    assert (await order(client))["status"] == "paid"
    await chat.say("yes")
    refunded = await order(client)
    assert refunded["status"] == "refunded" and refunded["refunded_to"] == "card"


async def test_corrections_are_bounded_then_a_person_takes_over(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    chat = await start(client)
    await to_read_back(chat)
    await chat.say("no, to my card")
    await chat.say("no, bank transfer")
    last = await chat.say("no, store credit")
    assert last["turn"]["move"]["name"] == "handoff"
    assert (await order(client))["status"] == "paid"
    assert last["turn"]["flow"]["status"] == "handed_off"


async def test_checkpoints_rewind_edit_and_fork_leave_the_original_unchanged(
    flow_client: tuple[TestClient, App],
) -> None:
    client, gb = flow_client
    chat = await start(client)
    await to_read_back(chat)
    resp = await client.get(f"/api/staff/runs?conversation={chat.conv['id']}", headers=STAFF)
    (run,) = (await resp.json())["runs"]
    cps = await (await client.get(f"/api/staff/runs/{run['id']}/checkpoints", headers=STAFF)).json()
    assert [c["step"] for c in cps["checkpoints"]] == [
        "ask_email",
        "ask_order",
        "lookup",
        "eligibility",
    ]
    await chat.say("no")
    cps = await (await client.get(f"/api/staff/runs/{run['id']}/checkpoints", headers=STAFF)).json()
    assert [c["step"] for c in cps["checkpoints"]] == [
        "ask_email",
        "ask_order",
        "lookup",
        "eligibility",
        "refund",
        "done",
    ]
    assert cps["run"]["schedule"] == [
        "ask_email@1",
        "ask_order@1",
        "lookup@1",
        "eligibility@1",
        "not_eligible@1",
        "refund@1",
        "done@1",
    ]
    lookup = cps["checkpoints"][2]
    assert lookup["input"]["values"]["order_id"] == "1042"
    assert lookup["output"]["result"]["amount"] == "42.00"
    before = list(gb.store.iter_checkpoint_rows(run["id"]))

    edited = {**lookup["output"], "result": {**lookup["output"]["result"], "amount": "40.00"}}
    resp = await client.post(
        f"/api/staff/runs/{run['id']}/fork",
        headers=STAFF,
        json={"at_step": "lookup", "output": edited},
    )
    assert resp.status == 201, await resp.text()
    forked = await resp.json()
    assert forked["run"]["parent_run_id"] == run["id"]
    assert forked["run"]["allow_side_effects"] is False
    assert [c["step"] for c in forked["checkpoints"]] == ["ask_email", "ask_order", "lookup"]
    assert forked["checkpoints"][2]["edited"] is True
    # The conversation continues on the fork: the read-back shows the edited amount, and the
    # change runs dry there: the orders API never hears of it.
    body = await chat.say("ok")
    assert "amount: $40.00" in text_of(body)
    assert body["turn"]["flow"]["run"] == forked["run"]["id"]
    done = await chat.say("yes")
    assert (await order(client))["status"] == "paid"
    assert "dry run" in text_of(done)
    assert list(gb.store.iter_checkpoint_rows(run["id"])) == before
    fork_cps = gb.store.checkpoints(forked["run"]["id"])
    assert [c.step_id for c in fork_cps] == [
        "ask_email",
        "ask_order",
        "lookup",
        "eligibility",
        "refund",
        "done",
    ]
    assert fork_cps[4].output["status"] == "dry_run"


async def test_a_fork_at_the_router_runs_only_the_recorded_route(
    flow_client: tuple[TestClient, App],
) -> None:
    """The router's checkpoint was taken before its choice skipped the other branch, so a fork
    there ran both: "Order 1042 can't be refunded here" and the read-back in one turn."""
    client, _ = flow_client
    chat = await start(client)
    await to_read_back(chat)
    resp = await client.get(f"/api/staff/runs?conversation={chat.conv['id']}", headers=STAFF)
    (run,) = (await resp.json())["runs"]
    resp = await client.post(
        f"/api/staff/runs/{run['id']}/fork", headers=STAFF, json={"at_step": "eligibility"}
    )
    assert resp.status == 201, await resp.text()
    body = await chat.say("ok")
    assert "can't be refunded" not in text_of(body)
    assert text_of(body) == READ_BACK
    assert [s["step"] for s in body["turn"]["flow"]["steps"]] == ["refund"]
    # An edited route is followed the same way: only the branch it names runs.
    resp = await client.post(
        f"/api/staff/runs/{body['turn']['flow']['run']}/fork",
        headers=STAFF,
        json={"at_step": "eligibility", "output": {"route": "not_eligible", "why": "edited"}},
    )
    assert resp.status == 201, await resp.text()
    body = await chat.say("ok")
    assert "can't be refunded" in text_of(body) and "Just to confirm" not in text_of(body)


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
    first = await chat.say("I'd like to add seats please")
    assert first["turn"]["flow"]["name"] == "add_seats"
    await chat.say("sam@example.com")
    ready = await chat.say("sub_acme1")
    assert "How many seats" in text_of(ready)
    added = await chat.say("add 5 more")
    assert text_of(added).startswith("Added 5 seats (now 10).")
    seats = await client.get(
        "/demo-api/subscriptions/sub_acme1/seats?email=sam@example.com", headers=DEMO_AUTH
    )
    assert (await seats.json())["seats"] == 10
    undo = await chat.say("undo")
    assert text_of(undo).startswith("Removed 5 seats (now 5).")
    seats = await client.get(
        "/demo-api/subscriptions/sub_acme1/seats?email=sam@example.com", headers=DEMO_AUTH
    )
    assert (await seats.json())["seats"] == 5
    finished = await chat.say("done")
    assert "All set" in text_of(finished)
    assert finished["turn"]["tools"] == []  # done makes no call
