"""The staff inspector over aiohttp's test client: log in and the session cookie, the list's
filters and paging in SQL, a timeline from stored records (an older, stripped one included), the
export, escalation actions reaching the customer, and rewind and fork of a flow run."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest
import sqlalchemy as sa
from aiohttp.test_utils import TestClient, TestServer

from bot.app import App
from bot.config import Settings
from bot.extend.recorder import MemoryRecorder
from bot.outcomes import KINDS
from bot.store import Turn
from tests.inspector_seed import seed_conversation

ADMIN = "inspector-admin-token"


@pytest.fixture
async def inspector(settings: Settings) -> AsyncIterator[tuple[TestClient, App]]:
    from gatebot_web.server import build_web_app

    settings.admin_token = ADMIN
    settings.trusted_proxies = ["127.0.0.1"]
    gb = App(settings, recorders=[MemoryRecorder()])
    await gb.start(channels=False)
    try:
        async with TestClient(TestServer(build_web_app(gb), host="127.0.0.1")) as client:
            yield client, gb
    finally:
        await gb.stop()


async def log_in(client: TestClient, token: str = ADMIN, **headers: str) -> Any:
    return await client.post(
        "/inspector/login",
        data={"token": token, "staff": "Dana"},
        allow_redirects=False,
        headers=headers,
    )


async def csrf_of(client: TestClient, path: str = "/inspector") -> str:
    page = await (await client.get(path)).text()
    found = re.search(r'<meta name="csrf" content="([^"]+)"', page)
    assert found, page[:500]
    return found.group(1)


async def test_without_a_session_pages_redirect_and_json_is_401(
    inspector: tuple[TestClient, App],
) -> None:
    client, _ = inspector
    for path in ("/inspector", "/inspector/escalations", "/inspector/runs/x"):
        resp = await client.get(path, allow_redirects=False)
        assert resp.status == 303
        assert resp.headers["Location"] == "/inspector/login?" + urlencode({"next": path})
    resp = await client.get("/inspector/api/conversations")
    assert resp.status == 401
    resp = await client.post("/inspector/api/runs/x/fork", json={"at_checkpoint": 0})
    assert resp.status == 401
    # The staff API's bearer token is not a session either.
    resp = await client.get(
        "/inspector/api/conversations", headers={"Authorization": f"Bearer {ADMIN}"}
    )
    assert resp.status == 401


async def test_wrong_token_is_refused_and_sets_no_cookie(
    inspector: tuple[TestClient, App],
) -> None:
    client, _ = inspector
    resp = await log_in(client, "not-the-token")
    assert resp.status == 401 and "Wrong token" in await resp.text()
    assert "Set-Cookie" not in resp.headers
    assert (await client.get("/inspector", allow_redirects=False)).status == 303


async def test_login_sets_a_strict_httponly_cookie_and_never_puts_the_token_in_a_url(
    inspector: tuple[TestClient, App],
) -> None:
    client, _ = inspector
    resp = await log_in(client)
    assert resp.status == 303 and resp.headers["Location"] == "/inspector"
    cookie = resp.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/inspector" in cookie
    assert "Secure" not in cookie  # plain http here
    assert ADMIN not in cookie and ADMIN not in resp.headers["Location"]
    page = await client.get("/inspector")
    assert page.status == 200 and ADMIN not in await page.text()
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    behind_tls = await log_in(client, **{"X-Forwarded-Proto": "https"})
    assert "Secure" in behind_tls.headers["Set-Cookie"]


async def test_login_returns_to_the_page_asked_for_and_only_to_the_inspector(
    inspector: tuple[TestClient, App],
) -> None:
    client, _ = inspector
    page = await (await client.get("/inspector/login?next=/inspector/runs")).text()
    assert 'name="next" value="/inspector/runs"' in page
    for asked, lands in [
        ("/inspector/escalations?all=1", "/inspector/escalations?all=1"),
        ("https://evil.example/", "/inspector"),
        ("//evil.example/inspector", "/inspector"),
        ("/inspector/x\r\nSet-Cookie: a=b", "/inspector"),
    ]:
        form = {"token": ADMIN, "staff": "Dana", "next": asked}
        resp = await client.post("/inspector/login", data=form, allow_redirects=False)
        assert resp.headers["Location"] == lands, asked


async def test_posts_need_the_csrf_token_and_logout_ends_the_session(
    inspector: tuple[TestClient, App],
) -> None:
    client, _ = inspector
    await log_in(client)
    resp = await client.post("/inspector/api/runs/x/rewind", json={"at_checkpoint": 0})
    assert resp.status == 403
    csrf = await csrf_of(client)
    resp = await client.post(
        "/inspector/api/runs/x/rewind", json={"at_checkpoint": 0}, headers={"X-CSRF-Token": csrf}
    )
    assert resp.status == 404  # past the session and CSRF checks: there is no run x
    out = await client.post("/inspector/logout", data={"csrf": csrf}, allow_redirects=False)
    assert out.status == 303 and out.headers["Location"] == "/inspector/login"
    assert (await client.get("/inspector", allow_redirects=False)).status == 303


async def test_login_attempts_are_rate_limited(inspector: tuple[TestClient, App]) -> None:
    client, gb = inspector
    limit = gb.settings.rate_staff_failures
    statuses = [(await log_in(client, f"guess-{n}")).status for n in range(limit + 1)]
    assert statuses[:limit] == [401] * limit and statuses[limit] == 429


async def listed(client: TestClient, **query: str) -> list[str]:
    resp = await client.get("/inspector/api/conversations", params=query)
    assert resp.status == 200, await resp.text()
    return [c["id"] for c in (await resp.json())["conversations"]]


async def test_filters_and_paging_run_in_the_store(inspector: tuple[TestClient, App]) -> None:
    client, gb = inspector
    long = seed_conversation(gb.store, 12, "web", "How much does it cost")
    short = seed_conversation(gb.store, 2, "slack", "Hello there")
    quiet = seed_conversation(gb.store, 4, "web", "Docker builds")
    esc = gb.store.escalate(short.id, "asked", "support", kind="asked")
    gb.store.update_escalation(esc.id or 0, status="resolved", outcome="refunded")
    await log_in(client)
    assert set(await listed(client)) == {long.id, short.id, quiet.id}
    assert await listed(client, channel="slack") == [short.id]
    assert await listed(client, unsure="1") == [long.id]  # seq 5 and 10 read unsure
    assert await listed(client, refused="1") == [long.id]  # seq 7's draft was refused
    assert set(await listed(client, escalated="1")) == {long.id, short.id}  # seq 11; the desk
    assert await listed(client, outcome="refunded") == [short.id]
    assert await listed(client, q="DOCKER") == [quiet.id]
    assert await listed(client, q="100%") == []  # a LIKE wildcard is searched as text
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    assert await listed(client, since=tomorrow) == []
    assert len(await listed(client, until=tomorrow)) == 3
    bad = await client.get("/inspector/api/conversations", params={"since": "yesterday"})
    assert bad.status == 400


async def test_the_list_pages(inspector: tuple[TestClient, App]) -> None:
    client, gb = inspector
    made = {seed_conversation(gb.store, 1).id for _ in range(53)}
    await log_in(client)
    first, second = await listed(client), await listed(client, page="2")
    assert len(first) == 50 and len(second) == 3 and set(first) | set(second) == made
    html = await (await client.get("/inspector", params={"page": "2"})).text()
    assert "page 2 of 2" in html and "53 conversation(s)" in html


async def test_the_timeline_shows_each_turns_decision(inspector: tuple[TestClient, App]) -> None:
    client, gb = inspector
    conv = seed_conversation(gb.store, 14)
    await log_in(client)
    html = await (await client.get(f"/inspector/conversations/{conv.id}")).text()
    assert html.count('class="turn"') == 14
    assert "0.42 / intent 0.60" in html  # an unsure read against its gate
    assert 'class="gate" style="left:60.0%"' in html
    assert "score 0.61 against threshold 0.35" in html
    assert "cites no fact" in html and "(citations)" in html  # the refused draft's reason
    assert 'href="/inspector/passages/faq-trial"' in html
    assert "orders.lookup" in html and "120 in / 24 out" in html
    assert html.count("; toward <b>demo</b>") == 1  # turn 13 works toward a demo
    assert "<script>" not in html  # the CSP allows no inline script here


async def test_customer_text_is_escaped(inspector: tuple[TestClient, App]) -> None:
    client, gb = inspector
    conv = seed_conversation(gb.store, 1, words="<img src=x onerror=alert(1)>")
    await log_in(client)
    html = await (await client.get(f"/inspector/conversations/{conv.id}")).text()
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


async def test_a_record_from_an_older_version_still_renders(
    inspector: tuple[TestClient, App],
) -> None:
    client, gb = inspector
    conv = seed_conversation(gb.store, 2)
    stripped = {
        "seq": 1,
        "message": {"text": "an old turn"},
        "reads": [{"head": "intent"}],
        "reply": {"gate": "not a dict"},
        "move": None,
    }
    with gb.store.engine.begin() as conn:
        conn.execute(
            sa.update(Turn.__table__)  # type: ignore[attr-defined]
            .where(sa.column("conversation_id") == conv.id, sa.column("seq") == 1)
            .values(record=stripped)
        )
    await log_in(client)
    resp = await client.get(f"/inspector/conversations/{conv.id}")
    html = await resp.text()
    assert resp.status == 200 and "an old turn" in html and "Turn 2" in html
    export = await client.get(f"/inspector/api/conversations/{conv.id}/export")
    assert (await export.json())["turns"][0]["record"] == stripped


async def test_export_downloads_the_conversation_with_its_records(
    inspector: tuple[TestClient, App],
) -> None:
    client, gb = inspector
    conv = seed_conversation(gb.store, 3)
    await log_in(client)
    resp = await client.get(f"/inspector/api/conversations/{conv.id}/export")
    assert resp.status == 200
    assert resp.headers["Content-Disposition"] == (
        f'attachment; filename="conversation-{conv.id}.json"'
    )
    body = json.loads(await resp.text())
    assert body["conversation"]["id"] == conv.id and len(body["turns"]) == 3
    assert [m["role"] for m in body["messages"]][:2] == ["customer", "agent"]
    assert body["turns"][2]["record"]["move"]["name"] == "answer"
    assert "token_hash" not in json.dumps(body)
    missing = await client.get("/inspector/api/conversations/nope/export")
    assert missing.status == 404


async def test_staff_take_over_and_answer_from_the_page(
    inspector: tuple[TestClient, App],
) -> None:
    client, gb = inspector
    made = await (await client.post("/api/conversations", json={})).json()
    customer = {"Authorization": f"Bearer {made['token']}"}
    esc = gb.store.escalate(made["id"], "the customer asked for a person", "support")
    await log_in(client)
    queue = await (await client.get("/inspector/escalations")).text()
    assert f'data-escalation="{esc.id}"' in queue
    csrf = await csrf_of(client)
    headers = {"X-CSRF-Token": csrf}
    ws = await client.ws_connect(f"/api/conversations/{made['id']}/events", headers=customer)
    took = await client.post(
        f"/inspector/api/escalations/{esc.id}/take_over", json={}, headers=headers
    )
    assert (await took.json())["escalation"] == {
        "id": esc.id,
        "status": "claimed",
        "staff": "Dana",
        "outcome": None,
        "conversation_id": made["id"],
    }
    sent = await client.post(
        f"/inspector/api/escalations/{esc.id}/reply",
        json={"text": "Hi, Dana here."},
        headers=headers,
    )
    assert sent.status == 200
    event = await ws.receive_json(timeout=10)
    assert event["type"] == "replies" and event["replies"][0]["text"] == "Hi, Dana here."
    assert event["replies"][0]["author"] == "Dana"
    await ws.close()
    seen = await (await client.get(f"/api/conversations/{made['id']}", headers=customer)).json()
    assert seen["paused"] and seen["messages"][-1]["text"] == "Hi, Dana here."
    empty = await client.post(
        f"/inspector/api/escalations/{esc.id}/reply", json={"text": " "}, headers=headers
    )
    assert empty.status == 400
    done = await client.post(
        f"/inspector/api/escalations/{esc.id}/resolve",
        json={"outcome": "not-resolved"},
        headers=headers,
    )
    assert (await done.json())["escalation"]["outcome"] == "not-resolved"
    assert (
        f'data-escalation="{esc.id}"'
        not in await (await client.get("/inspector/escalations")).text()
    )


async def test_resolve_from_the_queue_records_the_outcome_kind_chosen(
    inspector: tuple[TestClient, App],
) -> None:
    from bot.outcomes.labels import record_outcome

    client, gb = inspector
    conv = seed_conversation(gb.store, 3)
    bought = seed_conversation(gb.store, 1)
    esc = gb.store.escalate(conv.id, "the customer asked for a person", "support")
    await log_in(client)
    queue = await (await client.get("/inspector/escalations")).text()
    menu = re.search(r'<select name="outcome">(.*?)</select>', queue)
    assert menu and re.findall(r'value="([^"]+)"', menu.group(1)) == list(KINDS)
    assert '<option value="resolved" selected>' in menu.group(1)
    headers = {"X-CSRF-Token": await csrf_of(client)}
    path = f"/inspector/api/escalations/{esc.id}/resolve"
    for bad in ("sold", 5):
        resp = await client.post(path, json={"outcome": bad}, headers=headers)
        assert resp.status == 400 and "outcome" in (await resp.json())["error"]["message"]
    assert gb.store.outcomes(conv.id) == []  # nothing recorded, the escalation still open
    assert (await client.post(path, json={}, headers=headers)).status == 200  # the default
    assert gb.store.outcomes(conv.id)[0].kind == "resolved"
    gb.store.update_escalation(esc.id or 0, status="open")  # again, choosing this time
    resp = await client.post(path, json={"outcome": "churn"}, headers=headers)
    assert resp.status == 200 and (await resp.json())["escalation"]["outcome"] == "churn"
    labels = [(o.kind, o.source, o.staff) for o in gb.store.outcomes(conv.id)]
    assert labels == [("resolved", "escalation", "Dana"), ("churn", "escalation", "Dana")]
    assert [t["seq"] for t in gb.store.outcomes(conv.id)[1].turns] == [1, 2, 3]
    # The list's outcome filter reads the outcomes table: a webhook's label has no escalation.
    record_outcome(gb.store, {"conversation_id": bought.id, "kind": "purchase"}, "api")
    assert await listed(client, outcome="purchase") == [bought.id]
    assert await listed(client, outcome="churn") == [conv.id]
    page = await (await client.get(f"/inspector/conversations/{bought.id}")).text()
    assert "<li><b>purchase</b> from api" in page
    exported = await (await client.get(f"/inspector/api/conversations/{conv.id}/export")).json()
    assert [o["kind"] for o in exported["outcomes"]] == ["resolved", "churn"]


async def test_staff_confirm_or_correct_a_turns_intent_from_the_timeline(
    inspector: tuple[TestClient, App],
) -> None:
    client, gb = inspector
    conv = seed_conversation(gb.store, 2)
    first, second = gb.store.turns(conv.id)
    await log_in(client)
    page = await (await client.get(f"/inspector/conversations/{conv.id}")).text()
    assert page.count('class="label-turn"') == 2 and f'data-turn="{first.id}"' in page
    form = page.split(f'data-turn="{first.id}"')[1].split("</form>")[0]
    assert '<option value="pricing" selected>' in form  # what the head read, to confirm
    assert '<option value="none">' in form and "not labelled" in form
    path = f"/inspector/api/turns/{first.id}/label"
    refused = await client.post(path, json={"intent": "pricing"})
    assert refused.status == 403  # the session alone is not enough: the CSRF token too
    headers = {"X-CSRF-Token": await csrf_of(client)}
    for body, status in (
        ({"intent": "pricng"}, 400),  # a typo never becomes gold
        ({"intent": "pricing", "staff": "Eve"}, 400),  # who labels is the session's staff
        ({}, 400),
    ):
        resp = await client.post(path, json=body, headers=headers)
        assert resp.status == status, await resp.text()
    gone = "/inspector/api/turns/999999/label"
    assert (await client.post(gone, json={"intent": "none"}, headers=headers)).status == 404
    assert gb.store.labelled_turns("intent") == []

    ok = await client.post(path, json={"intent": "pricing"}, headers=headers)
    assert ok.status == 200 and (await ok.json())["confirmed"] is True
    fixed = await client.post(
        f"/inspector/api/turns/{second.id}/label", json={"intent": "refund"}, headers=headers
    )
    answer = await fixed.json()
    assert answer["confirmed"] is False and answer["label"] == {
        "head": "intent",
        "intent": "refund",
        "staff": "Dana",
    }
    labelled = gb.store.labelled_turns("intent")
    assert [(t.turn_id, t.label) for t in labelled] == [
        (first.id, "pricing"),
        (second.id, "refund"),
    ]
    page = await (await client.get(f"/inspector/conversations/{conv.id}")).text()
    form = page.split(f'data-turn="{second.id}"')[1].split("</form>")[0]
    assert '<option value="refund" selected>' in form and "labelled refund" in form
    exported = await (await client.get(f"/inspector/api/conversations/{conv.id}/export")).json()
    assert [t["intent_label"] for t in exported["turns"]] == ["pricing", "refund"]


def test_migration_fills_the_filter_columns_of_earlier_turns(database_url: str) -> None:
    from bot.store import Store
    from bot.store.migrations import MIGRATIONS, m011_inspector

    store = Store(database_url)
    store.migrate()
    conv = seed_conversation(store, 7)
    with store.engine.begin() as conn:
        conn.execute(sa.text("DROP INDEX ix_turns_unsure"))
        conn.execute(sa.text("DROP INDEX ix_turns_refused"))
        conn.execute(sa.text("DROP INDEX ix_conversations_created_at"))
        conn.execute(sa.text("DROP INDEX ix_conversations_updated_at"))
        conn.execute(sa.text("ALTER TABLE turns DROP COLUMN unsure"))
        conn.execute(sa.text("ALTER TABLE turns DROP COLUMN refused"))
        m011_inspector(conn)
    flags = {t.seq: (t.unsure, t.refused) for t in store.turns(conv.id)}
    store.close()
    assert flags[5] == (True, False) and flags[7] == (False, True) and flags[1] == (False, False)
    assert "m011_inspector" in [name for name, _ in MIGRATIONS]


async def test_rewind_and_fork_a_flow_run_from_the_page(
    flow_client: tuple[TestClient, App],
) -> None:
    from tests.test_flows_api import start, to_read_back

    client, gb = flow_client
    chat = await start(client)
    await to_read_back(chat)
    [run] = gb.store.flow_runs(chat.conv["id"])
    cps = gb.store.checkpoints(run.id)
    lookup = next(c for c in cps if c.step_id == "lookup")
    login = await client.post(
        "/inspector/login",
        data={"token": "staff-secret-token", "staff": "Dana"},
        allow_redirects=False,
    )
    assert login.status == 303
    page = await (await client.get(f"/inspector/runs/{run.id}")).text()
    assert 'class="node taken" data-step="lookup"' in page and f'id="cp-{lookup.idx}"' in page
    headers = {"X-CSRF-Token": await csrf_of(client, f"/inspector/runs/{run.id}")}
    base = f"/inspector/api/runs/{run.id}"
    rewound = await client.post(
        f"{base}/rewind", json={"at_checkpoint": lookup.idx}, headers=headers
    )
    assert (await rewound.json())["step"] == "lookup"
    edited = {**lookup.output, "edited_by": "inspector test"}
    forked = await client.post(
        f"{base}/fork", json={"at_checkpoint": lookup.idx, "output": edited}, headers=headers
    )
    assert forked.status == 201, await forked.text()
    new = (await forked.json())["run"]
    assert new["parent_run_id"] == run.id and new["allow_side_effects"] is False
    copy = gb.store.checkpoints(new["id"])[-1]
    assert copy.edited and copy.output == edited
    assert [c.output for c in gb.store.checkpoints(run.id)] == [c.output for c in cps]
    bad = await client.post(
        f"{base}/fork", json={"at_checkpoint": lookup.idx, "output": [1]}, headers=headers
    )
    assert bad.status == 400
    conv_id = chat.conv["id"]
    exported = await (await client.get(f"/inspector/api/conversations/{conv_id}/export")).json()
    by_id = {r["id"]: r for r in exported["flow_runs"]}
    assert [c["step"] for c in by_id[run.id]["checkpoints"]] == [c.step_id for c in cps]
    assert by_id[new["id"]]["checkpoints"][-1]["edited"] is True
    listing = await (await client.get("/inspector/runs")).text()
    assert listing.index(new["id"]) < listing.index(run.id)  # newest first
    assert (await client.get("/inspector/runs/nosuchrun")).status == 404


def test_the_list_query_on_each_database(database_url: str) -> None:
    """The same SQL on SQLite and PostgreSQL: filters, the date range, search and paging."""
    from bot.outcomes.labels import record_outcome
    from bot.store import Store
    from bot.store.inspect import ConversationFilter, find_conversations

    store = Store(database_url)
    store.migrate()
    try:
        long = seed_conversation(store, 7, "web", "Pricing 100% please")
        other = seed_conversation(store, 1, "slack", "hello")
        today = datetime.now(UTC).date()

        def ids(**kw: Any) -> list[str]:
            return [r.id for r in find_conversations(store, ConversationFilter(**kw))[0]]

        store.update_conversation(other.id, state={"values": {}, "outcome": "demo"})
        assert ids(outcome="demo") == [other.id] and ids(outcome="trial") == []
        record_outcome(store, {"conversation_id": long.id, "kind": "trial"}, "api")
        assert ids(outcome="trial") == [long.id]  # a label in the outcomes table
        assert ids(unsure=True, refused=True) == [long.id]
        assert ids(channel="slack") == [other.id]
        assert ids(text="100%") == [long.id] and ids(text="0_") == []
        assert set(ids(since=today, until=today)) == {long.id, other.id}
        assert ids(until=today - timedelta(days=1)) == []
        rows, total = find_conversations(store, ConversationFilter(), page=2, per_page=1)
        assert total == 2 and len(rows) == 1 and rows[0].first_message
    finally:
        store.close()


async def test_hostile_requests_get_no_5xx(inspector: tuple[TestClient, App]) -> None:
    client, _ = inspector
    raw = [b"\xff\xfe", b"token=%ZZ&staff=%00", b"{" * 50, b"a=" + b"x" * 70_000]
    for body in raw:
        for kind in ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain"):
            resp = await client.post("/inspector/login", data=body, headers={"Content-Type": kind})
            assert resp.status < 500, (body[:20], kind, await resp.text())
    await log_in(client)
    csrf = {"X-CSRF-Token": await csrf_of(client)}
    for path in (
        "/inspector/conversations/a%00b",
        "/inspector/passages/%00%ff",
        "/inspector/runs/" + "x" * 300,
        "/inspector?page=0",
        "/inspector?page=99999999",
        "/inspector?since=2026-13-40",
        "/inspector?q=" + "%" * 500,
        "/inspector/static/../server.py",
        "/inspector/static/widget.js",
    ):
        resp = await client.get(path)
        assert resp.status < 500, (path, await resp.text())
    for path in (
        "/inspector/api/escalations/99999/reply",
        "/inspector/api/escalations/1/explode",
        "/inspector/api/runs/x/fork",
        "/inspector/api/runs/x/rewind",
        "/inspector/api/turns/1/label",
    ):
        for body in (b"[]", b"\xff", b'{"at_checkpoint": true, "text": 5}', b"null"):
            resp = await client.post(path, data=body, headers=csrf)
            assert 400 <= resp.status < 500, (path, body, await resp.text())


def test_the_graph_draws_the_flow_file_and_says_when_the_run_ran_another_version(
    pack: Any,
) -> None:
    from gatebot_web.inspector.graph import run_page_body

    from bot.store import FlowRun

    flow = pack.flows["refund"]
    run = FlowRun(id="r1", flow="refund", flow_version="0", schedule=[])
    body = run_page_body(run, flow, [])
    assert body.count('class="node"') == len(flow.steps) and "taken" not in body
    assert f"the pack's v{flow.version}" in body and "this run ran v0" in body
