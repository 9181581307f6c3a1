"""Site context with consent: the page is shared only with consent, the consent is recorded with
its source, the pack's context.yaml makes a hypothesis of the page, and the hypothesis shapes the
first question and nothing else: it never fills a value and never passes a gate."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from click.testing import CliRunner

from bot.app import App
from bot.cli import cli
from bot.config import Settings
from bot.errors import PackErrors
from bot.packs import load_pack
from bot.packs.checked import load_checked_pack
from bot.packs.context import consented
from bot.plugins import load_plugins
from bot.turn import sitecontext
from bot.turn.decide import Decision
from bot.turn.record import new_record
from tests.conftest import ACME

PAGE = {"url": "https://www.acme.example/monitor/alerts?x=1", "title": "Alerts", "referrer": ""}


async def conversation(client: TestClient) -> tuple[str, dict[str, str]]:
    resp = await client.post("/api/conversations", json={})
    assert resp.status == 201
    data = await resp.json()
    return data["id"], {"Authorization": f"Bearer {data['token']}"}


async def say(client: TestClient, cid: str, auth: dict[str, str], text: str, n: int) -> Any:
    resp = await client.post(
        f"/api/conversations/{cid}/messages",
        json={"text": text, "client_message_id": f"m{n}"},
        headers=auth,
    )
    assert resp.status == 200, await resp.text()
    return await resp.json()


async def test_a_consented_page_is_a_hypothesis_that_shapes_the_greeting(
    client: TestClient,
) -> None:
    cid, auth = await conversation(client)
    resp = await client.post(
        f"/api/conversations/{cid}/context", json={"consent": "visitor", **PAGE}, headers=auth
    )
    assert resp.status == 200
    shared = await resp.json()
    assert shared["consent"]["given"] is True and shared["consent"]["source"] == "visitor"
    assert shared["hypothesis"]["product"] == "monitor"
    assert shared["greeting"].startswith("Hi! I'm the Acme Cloud assistant. Looking at Acme")
    answer = await say(client, cid, auth, "hello", 1)
    assert "Looking at Acme Monitor?" in answer["replies"][0]["text"]
    context = answer["turn"]["message"]["context"]
    assert context["page"] == PAGE
    assert context["hypothesis"]["product"] == "monitor"
    assert context["shaped"] == "greeting: Acme Monitor"
    assert answer["turn"]["values"] == []


async def test_the_site_can_say_it_collected_consent(client: TestClient) -> None:
    cid, auth = await conversation(client)
    url = "https://www.acme.example/pricing"
    resp = await client.post(
        f"/api/conversations/{cid}/context", json={"consent": "site", "url": url}, headers=auth
    )
    shared = await resp.json()
    assert shared["consent"]["source"] == "site" and shared["hypothesis"]["intent"] == "pricing"
    assert shared["greeting"].startswith("Hi! I'm the Acme Cloud assistant. I can answer")


async def test_a_refused_consent_is_recorded_with_no_page(client: TestClient) -> None:
    cid, auth = await conversation(client)
    path = f"/api/conversations/{cid}/context"
    bad = await client.post(path, json={"consent": "declined", **PAGE}, headers=auth)
    assert bad.status == 400
    resp = await client.post(path, json={"consent": "declined"}, headers=auth)
    assert (await resp.json())["consent"]["given"] is False
    answer = await say(client, cid, auth, "hello", 1)
    context = answer["turn"]["message"]["context"]
    assert context["consent"]["given"] is False
    assert context["page"] is None and context["hypothesis"] is None
    assert "Looking at" not in answer["replies"][0]["text"]


async def test_bad_context_requests_are_400_and_change_nothing(client: TestClient) -> None:
    cid, auth = await conversation(client)
    path = f"/api/conversations/{cid}/context"
    for body in (
        {"url": PAGE["url"]},
        {"consent": "yes", "url": PAGE["url"]},
        {"consent": "visitor", "url": "javascript:alert(1)"},
        {"consent": "visitor", "url": PAGE["url"], "title": "x" * 301},
        {"consent": "visitor", "url": PAGE["url"], "referrer": "ftp://x"},
    ):
        resp = await client.post(path, json=body, headers=auth)
        assert resp.status == 400, body
    assert (await client.post(path, json={"consent": "visitor", **PAGE})).status == 401
    answer = await say(client, cid, auth, "hello", 1)
    assert "context" not in answer["turn"]["message"]


async def test_without_consent_nothing_is_recorded(client: TestClient) -> None:
    cid, auth = await conversation(client)
    answer = await say(client, cid, auth, "hello", 1)
    assert "context" not in answer["turn"]["message"]
    assert "Looking at" not in answer["replies"][0]["text"]


MESSAGES = ["I want a demo", "not sure really", "what does it cost?"]


async def _turns(client: TestClient, url: str | None) -> list[dict[str, Any]]:
    cid, auth = await conversation(client)
    if url:
        body = {"consent": "visitor", "url": url}
        assert (await client.post(f"/api/conversations/{cid}/context", json=body, headers=auth)).ok
    return [(await say(client, cid, auth, text, n))["turn"] for n, text in enumerate(MESSAGES)]


async def test_a_hypothesis_never_fills_a_value_nor_passes_a_gate(client: TestClient) -> None:
    """The same messages with and without a page whose hypothesis is the demo intent and the
    Monitor product: every reading, gate outcome, value and move is the same."""
    plain = await _turns(client, None)
    hinted = await _turns(client, "https://www.acme.example/demo/monitor")
    for without, with_ in zip(plain, hinted, strict=True):
        assert with_["message"]["context"]["hypothesis"]["intent"] == "demo"
        assert with_["reads"] == without["reads"]
        assert with_["values"] == without["values"]
        assert with_["move"] == without["move"] and with_["legal"] == without["legal"]
    # "I want a demo" still asks the use case: the page's product filled no slot.
    assert hinted[0]["move"]["name"] == "ask" and hinted[0]["values"] == []
    assert not any("monitor" in str(v["value"]).lower() for t in hinted for v in t["values"])


def test_clarify_options_put_the_hypothesis_first_and_add_none(pack: Any) -> None:
    record = new_record("c", 1, "hm", "web", None)
    site = consented(pack, "visitor", {"url": "https://x.example/pricing",
                                                   "title": "", "referrer": ""})  # fmt: skip
    state: Any = {"values": {}, "site": site}
    sitecontext.note(record, state)
    decision = Decision(["clarify"], "unsure", move="clarify", options=["demo", "pricing"])
    sitecontext.shape(pack, record, state, decision)
    assert decision.options == ["pricing", "demo"]
    assert record["message"]["context"]["shaped"] == "clarify options: pricing first"
    other = Decision(["clarify"], "unsure", move="clarify", options=["demo", "trial"])
    sitecontext.shape(pack, record, state, other)
    assert other.options == ["demo", "trial"]  # never an option the intent head did not offer


BAD = [
    ("pages:\n  - match: /x\n    product: nonesuch\n", "unknown product 'nonesuch'"),
    ("pages:\n  - match: /x\n    intent: nonesuch\n", "unknown intent 'nonesuch'"),
    ("pages:\n  - match: x\n    intent: demo\n", "does not match"),
    ("pages:\n  - match: /x\n", "is not valid under any of the given schemas"),
    ("pages:\n  - match: /x\n    intent: demo\n    colour: red\n", "check the spelling"),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[m for _, m in BAD])
def test_check_and_run_refuse_the_same_bad_context_yaml(
    tmp_path: Path, text: str, message: str
) -> None:
    pack = tmp_path / "acme"
    shutil.copytree(ACME, pack, ignore=shutil.ignore_patterns("heads"))
    (pack / "context.yaml").write_text(text)
    with pytest.raises(PackErrors) as refused:
        load_checked_pack(pack, load_plugins())
    assert message in str(refused.value)
    assert "acme/context.yaml" in str(refused.value)
    result = CliRunner().invoke(cli, ["check", str(pack)])
    assert result.exit_code == 1 and message in result.output
    with pytest.raises(PackErrors):
        App(Settings(pack=pack, data_dir=tmp_path, recorders=[]))


def test_the_sample_pack_maps_its_pages(pack: Any) -> None:
    assert consented(pack, "site", {"url": "https://a.example/status/x",
                                                "title": "", "referrer": ""})["hypothesis"] == {
        "match": "/status*", "product": "status", "product_name": "Acme Status",
        "intent": "product_question",
    }  # fmt: skip
    assert load_pack(ACME).context[0].intent == "pricing"
