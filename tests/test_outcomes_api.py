"""Outcomes and turn labels through the staff REST API, the help desk's resolve, the store on
SQLite and PostgreSQL, and the candidate head read in the shadow without ever acting."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import App
from bot.config import Settings
from bot.extend.recorder import MemoryRecorder
from bot.heads.trained import load_trained
from bot.outcomes.labels import record_outcome
from bot.outcomes.packpins import set_pin
from bot.store import Store
from bot.turn.record import new_record

ADMIN = "outcome-staff-token"
STAFF = {"Authorization": f"Bearer {ADMIN}"}
ACME = Path(__file__).resolve().parent.parent / "knowledge" / "acme"


@pytest.fixture
async def staff_client(settings: Settings) -> AsyncIterator[tuple[TestClient, App]]:
    from gatebot_web.server import build_web_app

    settings.admin_token = ADMIN
    gb = App(settings, recorders=[MemoryRecorder()])
    await gb.start(channels=False)
    try:
        async with TestClient(TestServer(build_web_app(gb), host="127.0.0.1")) as client:
            yield client, gb
    finally:
        await gb.stop()


async def _turn(client: TestClient, text: str) -> tuple[str, dict[str, Any]]:
    made = await (await client.post("/api/conversations")).json()
    auth = {"Authorization": f"Bearer {made['token']}"}
    resp = await client.post(
        f"/api/conversations/{made['id']}/messages",
        headers=auth,
        json={"text": text, "client_message_id": "m1"},
    )
    assert resp.status == 200
    return made["id"], (await resp.json())["turn"]


async def test_an_outcome_is_recorded_once_per_external_id_and_links_the_turns(
    staff_client: tuple[TestClient, App],
) -> None:
    client, gb = staff_client
    cid, turn = await _turn(client, "Can I get a demo of Pipelines?")
    body = {"conversation_id": cid, "kind": "purchase", "external_id": "crm-77", "value": 49}
    assert (await client.post("/api/outcomes", json=body)).status == 401  # no staff token
    first = await client.post("/api/outcomes", json=body, headers=STAFF)
    assert first.status == 201
    stored = (await first.json())["outcome"]
    [link] = stored["turns"]
    assert link["seq"] == 1 and link["heads"]["intent"] == turn["reads"][0]["version"]
    assert link["forecast"]["version"] == turn["forecast"]["version"]
    again = await client.post("/api/outcomes", json=body, headers=STAFF)
    assert again.status == 200 and (await again.json())["duplicate"]
    assert (await again.json())["outcome"]["id"] == stored["id"]
    clash = await client.post("/api/outcomes", json={**body, "kind": "churn"}, headers=STAFF)
    assert clash.status == 400 and "crm-77" in (await clash.json())["error"]["message"]
    assert len(gb.store.outcomes(cid)) == 1


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"kind": "bought"}, "kind must be one of"),
        ({"conversation_id": 5}, "conversation_id"),
        ({"value": "lots"}, "value must be a number"),
        ({"at": "yesterday"}, "ISO 8601"),
        ({"colour": "red"}, "unknown field"),
        ({"external_id": ""}, "external_id"),
    ],
)
async def test_a_bad_outcome_is_refused_and_nothing_is_stored(
    staff_client: tuple[TestClient, App], change: dict[str, Any], says: str
) -> None:
    client, gb = staff_client
    cid, _ = await _turn(client, "How much is Monitor?")
    body = {"conversation_id": cid, "kind": "trial", **change}
    resp = await client.post("/api/outcomes", json=body, headers=STAFF)
    assert resp.status == 400 and says in (await resp.json())["error"]["message"]
    assert gb.store.outcomes() == []


async def test_an_outcome_for_an_unknown_conversation_is_404(
    staff_client: tuple[TestClient, App],
) -> None:
    client, _ = staff_client
    body = {"conversation_id": "nope", "kind": "trial"}
    assert (await client.post("/api/outcomes", json=body, headers=STAFF)).status == 404


async def test_staff_confirm_or_correct_a_turns_intent(
    staff_client: tuple[TestClient, App],
) -> None:
    client, gb = staff_client
    cid, turn = await _turn(client, "Can I get a demo of Pipelines?")
    turn_id = gb.store.turns(cid)[0].id
    url = f"/api/turns/{turn_id}/label"
    read = turn["reads"][0]["answer"]
    ok = await client.post(url, json={"intent": read, "staff": "Sam"}, headers=STAFF)
    assert ok.status == 200 and (await ok.json())["confirmed"]
    fixed = await client.post(url, json={"intent": "pricing", "staff": "Sam"}, headers=STAFF)
    assert fixed.status == 200 and not (await fixed.json())["confirmed"]
    [labelled] = gb.store.labelled_turns("intent")
    assert (labelled.turn_id, labelled.label) == (turn_id, "pricing")  # the correction replaced it
    typo = await client.post(url, json={"intent": "pricng"}, headers=STAFF)
    assert typo.status == 400 and "pack's intents" in (await typo.json())["error"]["message"]
    assert (
        await client.post("/api/turns/999999/label", json={"intent": "none"}, headers=STAFF)
    ).status == 404
    assert (await client.post(url, json={"intent": "none"})).status == 401


async def test_resolving_an_escalation_with_an_outcome_labels_the_conversation(
    staff_client: tuple[TestClient, App],
) -> None:
    client, gb = staff_client
    cid, _ = await _turn(client, "I want to talk to a person")
    esc_id = gb.store.escalations("open")[0].id or 0
    url = f"/api/staff/escalations/{esc_id}/resolve"
    for _ in range(2):  # a resolve sent twice labels once
        resp = await client.post(url, json={"staff": "Sam", "outcome": "purchase"}, headers=STAFF)
        assert resp.status == 200
    [outcome] = gb.store.outcomes(cid)
    assert (outcome.kind, outcome.source, outcome.staff) == ("purchase", "escalation", "Sam")
    assert outcome.turns and outcome.turns[0]["seq"] == 1


def test_outcomes_and_labels_are_stored_idempotently_and_erased(database_url: str) -> None:
    store = Store(database_url)
    store.migrate()
    try:
        conv, _ = store.create_conversation("web")
        msg, _ = store.receive(conv.id, "web", "x1", "Can I get a demo?")
        store.complete_turn(conv, msg, new_record(conv.id, 1, msg.text, "web", "x1"), [], "web")
        turn_id = store.turns(conv.id)[0].id or 0
        store.label_turn(turn_id, "intent", "trial", "Sam")
        store.label_turn(turn_id, "intent", "demo", "Sam")  # a correction replaces the label
        assert [t.label for t in store.labelled_turns("intent")] == ["demo"]
        fields = {"conversation_id": conv.id, "kind": "trial", "external_id": "bill-1"}
        first, dup = record_outcome(store, fields, "api")
        again, dup2 = record_outcome(store, fields, "api")
        assert (dup, dup2) == (False, True) and first.id == again.id
        exported = store.export_customer([conv.id])[0]
        assert [o["kind"] for o in exported["outcomes"]] == ["trial"]
        counts = store.erase_customer([conv.id], "conversation")
        assert (counts["outcomes"], counts["turn_labels"]) == (1, 1)
        assert store.outcomes() == [] and store.labelled_turns("intent") == []
    finally:
        store.close()


def _biased_candidate(pack_dir: Path, towards: str) -> str:
    """A candidate intent head that reads ``towards`` whatever it is told, pinned in the pack."""
    head = load_trained(pack_dir / "heads" / "intent")
    head.bias = np.where(np.array(head.labels) == towards, 50.0, -50.0).astype(np.float32)
    head.novelty = None
    version = head.save(pack_dir / "heads" / "intent.candidate")
    set_pin(
        pack_dir / "pack.yaml",
        "intent",
        {"candidate": "heads/intent.candidate", "candidate_version": version},
    )
    return version


async def test_a_candidate_head_reads_in_the_shadow_and_never_acts(
    tmp_path: Path, settings: Settings
) -> None:
    pack_dir = tmp_path / "pack"
    shutil.copytree(ACME, pack_dir)
    version = _biased_candidate(pack_dir, "pricing")
    records = []
    for root in (ACME, pack_dir):
        memory = MemoryRecorder()
        gb = App(
            Settings(pack=root, data_dir=tmp_path / root.name, recorders=[]), recorders=[memory]
        )
        await gb.start(channels=False)
        try:
            conv, _ = gb.store.create_conversation("web", with_token=True)
            await gb.host.handle(conv, "Can I get a demo of Pipelines?", "m1")
            records.append(memory.turns[-1])
        finally:
            await gb.stop()
    plain, shadowed = records
    read = shadowed["reads"][0]
    assert read["shadow"]["version"] == version and read["shadow"]["answer"] == "pricing"
    assert read["shadow"]["outcome"] == "act"  # it would have acted ...
    assert read["answer"] == plain["reads"][0]["answer"] == "demo"  # ... and did not
    assert shadowed["move"] == plain["move"] and shadowed["legal"] == plain["legal"]
    assert "shadow" not in plain["reads"][0]
