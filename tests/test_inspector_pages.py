"""The inspector's Replay and Unanswered pages over aiohttp's test client: a replay of one stored
conversation through a pack with a raised gate, started, refused while it runs, polled, shown and
downloaded; bad packs and selections refused clearly; unanswered groups with a since filter."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import App
from bot.config import Settings
from tests.conftest import ACME
from tests.test_inspector import ADMIN, csrf_of, log_in
from tests.test_unanswered import INVOICES, ON_PREM, WEATHER, seed


@pytest.fixture
async def site(settings: Settings) -> AsyncIterator[tuple[TestClient, App]]:
    from gatebot_web.server import build_web_app

    settings.admin_token = ADMIN
    gb = App(settings)
    await gb.start(channels=False)
    try:
        async with TestClient(TestServer(build_web_app(gb), host="127.0.0.1")) as client:
            yield client, gb
    finally:
        await gb.stop()


async def _until_over(client: TestClient) -> dict[str, Any]:
    for _ in range(1200):  # bounded: a few minutes at most on busy cores
        status = await (await client.get("/inspector/api/replay")).json()
        if status["state"] != "running":
            return status  # type: ignore[no-any-return]
        await asyncio.sleep(0.2)
    raise AssertionError("the replay did not finish")


def _raised_gate_pack(tmp_path: Path, confidence: float) -> Path:
    pack = tmp_path / "raised"
    shutil.copytree(ACME, pack)
    with (pack / "gates.yaml").open("a", encoding="utf-8") as f:
        f.write(f"sentiment: {round((confidence + 1) / 2, 4)}\n")
    return pack


async def test_a_replay_runs_in_the_background_and_shows_the_changed_turn(
    site: tuple[TestClient, App], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gatebot_web.inspector import replayjob

    client, gb = site
    conv = gb.store.create_conversation("web")[0]
    await gb.agent.handle(conv, "Is there a free trial?", "m1")
    [turn] = gb.store.turns(conv.id)
    [read] = [r for r in turn.record["reads"] if r["head"] == "sentiment"]
    assert read["outcome"] == "act" and read["confidence"] < 0.99
    pack = _raised_gate_pack(tmp_path, read["confidence"])
    # The replay waits for the test's word, so "a second start while one runs" is certain.
    go, real = threading.Event(), replayjob.replay

    async def held(*args: Any, **kw: Any) -> Any:
        await asyncio.to_thread(go.wait, 60)
        return await real(*args, **kw)

    monkeypatch.setattr(replayjob, "replay", held)
    await log_in(client)
    page = await (await client.get("/inspector/replay")).text()
    assert "Start replay" in page and 'data-replay-state="idle"' in page
    csrf = {"X-CSRF-Token": await csrf_of(client, "/inspector/replay")}
    body = {"pack": str(pack), "conversations": conv.id}
    assert (await client.post("/inspector/api/replay", json=body)).status == 403  # no CSRF
    started = await client.post("/inspector/api/replay", json=body, headers=csrf)
    assert started.status == 202, await started.text()
    assert (await started.json())["state"] == "running"
    again = await client.post("/inspector/api/replay", json=body, headers=csrf)
    assert again.status == 409 and "already running" in await again.text()
    assert 'data-replay-state="running"' in await (await client.get("/inspector/replay")).text()
    go.set()
    status = await _until_over(client)
    assert status["state"] == "done", status
    assert status["done"] == status["conversations"] == 1
    assert status["totals"]["changed"] == 1 and status["totals"]["crossed_gates"] == 1
    page = await (await client.get("/inspector/replay")).text()
    assert "1 of 1 turn(s) changed" in page and "Is there a free trial?" in page
    assert "sentiment: act" in page and "sentiment: unsure" in page
    download = await client.get("/inspector/api/replay/report.json")
    assert "attachment" in download.headers["Content-Disposition"]
    report = json.loads(await download.text())
    assert [t["seq"] for t in report["turns"] if t["changed"]] == [turn.record["seq"]]


async def test_bad_packs_and_selections_get_clear_errors(
    site: tuple[TestClient, App], tmp_path: Path
) -> None:
    client, _ = site
    await log_in(client)
    csrf = {"X-CSRF-Token": await csrf_of(client, "/inspector/replay")}
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.txt").write_text("x")
    for body, words in [
        ({"pack": ""}, "which pack"),
        ({"pack": str(tmp_path / "nowhere")}, "not a folder"),
        ({"pack": str(tmp_path / "file.txt")}, "not a folder"),
        ({"pack": str(tmp_path / "empty")}, "does not load as a pack"),
        ({"pack": str(ACME), "since": "yesterday"}, "since must be a date"),
        ({"pack": str(ACME), "conversations": "no-such-id"}, "no-such-id"),
        ({"pack": str(ACME), "since": "2999-01-01"}, "no logged conversations"),
        ({"pack": 5}, "pack must be text"),
    ]:
        resp = await client.post("/inspector/api/replay", json=body, headers=csrf)
        assert resp.status == 400, (body, await resp.text())
        assert words in (await resp.json())["error"]["message"], body
    assert (await client.get("/inspector/api/replay/report.json")).status == 404
    assert (await (await client.get("/inspector/api/replay")).json())["state"] == "idle"


async def test_a_failed_replay_says_why_and_another_may_start(
    site: tuple[TestClient, App], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gatebot_web.inspector import replayjob

    client, gb = site
    conv = gb.store.create_conversation("web")[0]
    await gb.agent.handle(conv, "hello there", "m1")

    async def broken(*args: Any, **kw: Any) -> Any:
        raise RuntimeError("<b>the sandbox fell over</b>")

    monkeypatch.setattr(replayjob, "replay", broken)
    await log_in(client)
    csrf = {"X-CSRF-Token": await csrf_of(client, "/inspector/replay")}
    body = {"pack": str(ACME)}
    assert (await client.post("/inspector/api/replay", json=body, headers=csrf)).status == 202
    status = await _until_over(client)
    assert status["state"] == "failed" and "the sandbox fell over" in status["error"]
    page = await (await client.get("/inspector/replay")).text()
    assert "The replay failed." in page and "&lt;b&gt;the sandbox fell over" in page
    assert (await client.post("/inspector/api/replay", json=body, headers=csrf)).status == 202
    assert (await _until_over(client))["state"] == "failed"


def test_the_report_is_escaped_on_the_page() -> None:
    from gatebot_web.inspector.replaypage import report_body

    evil = "<script>alert(1)</script>"
    turn = {
        "conversation_id": evil,
        "seq": 1,
        "text": evil,
        "changed": True,
        "changes": {"reply": {"before": evil, "after": "<img src=x onerror=alert(1)>"}},
        "crossed": [],
        "would_call": [{"tool": evil, "arguments": {}}],
        "model_changed": [evil],
        "skipped": None,
    }
    totals = {
        "conversations": 1,
        "turns": 1,
        "replayed": 1,
        "skipped": 0,
        "changed": 1,
        "by_decision": {"reply": 1},
        "crossed_gates": 0,
        "would_call": 1,
        "model_changed": 1,
    }
    shown = report_body({"pack": evil, "source": evil, "totals": totals, "turns": [turn]})
    assert "<script" not in shown and "<img" not in shown and "&lt;script&gt;" in shown


async def test_the_unanswered_page_groups_with_a_since_filter(
    site: tuple[TestClient, App],
) -> None:
    client, gb = site
    seed(gb.store, [("hi", None), (INVOICES[0], "unanswered"), (WEATHER[0], "out_of_scope")])
    seed(gb.store, [(INVOICES[1], "unanswered"), (ON_PREM[0], "unanswered")], days_ago=2)
    seed(gb.store, [(INVOICES[2], "unanswered"), ("<b>bold</b> question?", "unanswered")], 3)
    await log_in(client)
    page = await (await client.get("/inspector/unanswered?since=all")).text()
    assert "5 unanswered question(s)" in page or "6 unanswered question(s)" in page
    assert "Unanswered</h1>" in page and "<b>bold</b>" not in page and "&lt;b&gt;" in page
    assert "FAQ" in page or "document gap" in page
    data = await (await client.get("/inspector/api/unanswered?since=all")).json()
    [invoices] = [c for c in data["clusters"] if INVOICES[0] in c["examples"]]
    assert invoices["count"] == 3 and invoices["suggestion"] in ("faq", "document_gap")
    recent = await (await client.get("/inspector/api/unanswered?since=1d")).json()
    assert recent["asked"] == 2  # the invoice question and the weather of today only
    assert all(INVOICES[1] not in c["examples"] for c in recent["clusters"])
    bad = await client.get("/inspector/unanswered?since=soon")
    assert bad.status == 400
