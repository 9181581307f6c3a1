"""``gatebot replay`` over a log of 500+ turns that scripts/make_replay_log.py makes once a session
on the sample pack: an unchanged pack changes nothing; a raised gate changes exactly the turns
whose recorded reads cross it; a changed FAQ answer changes exactly the turns that cited it; the
budget decides the exit code; and a tool that changes anything never runs (the orders API, on
loopback, sees no request)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from click.testing import CliRunner

from bot.cli import cli
from bot.config import Settings
from bot.replay import LogError, ReplayReport, TurnDiff, from_jsonl, from_store, replay
from bot.replay.recorded import WOULD_CALL
from bot.store import Store

ROOT = Path(__file__).resolve().parent.parent
ACME = ROOT / "knowledge" / "acme"


def _script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_replay_log", ROOT / "scripts" / "make_replay_log.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed script's log: turns.jsonl and gatebot.db (about 40 s on two busy cores)."""
    out = tmp_path_factory.mktemp("replay-log")
    turns = asyncio.run(_script().make_log(out, 130, ACME))
    assert turns >= 500
    return out


@pytest.fixture(scope="session")
def records(log_dir: Path) -> list[dict[str, Any]]:
    lines = (log_dir / "turns.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _pack_copy(tmp_path: Path) -> Path:
    pack = tmp_path / "pack"
    shutil.copytree(ACME, pack)
    return pack


def _settings(tmp_path: Path, pack: Path) -> Settings:
    return Settings(pack=pack, data_dir=tmp_path / "data", recorders=[])


async def _replay(log_dir: Path, tmp_path: Path, pack: Path, **kw: Any) -> ReplayReport:
    log = from_jsonl(log_dir / "turns.jsonl", kw.get("ids"))
    return await replay(log, pack, _settings(tmp_path, pack))


def _where(turns: list[TurnDiff]) -> set[tuple[str, int]]:
    return {(t.conversation_id, t.seq) for t in turns}


async def test_the_log_is_varied(records: list[dict[str, Any]]) -> None:
    """Questions, FAQ answers, both flows with their tools, hand-offs, declines, stops."""
    moves = {r["move"]["name"] for r in records}
    assert {"answer", "ask", "handoff", "decline", "stop", "confirm", "acknowledge"} <= moves
    assert {r["flow"]["name"] for r in records if r["flow"]} == {"refund", "add_seats"}
    tools = {e["tool"] for r in records for e in r["tools"] if "call" in e["detail"]}
    assert {"orders.lookup_order", "orders.refund_order", "orders.change_items"} <= tools
    assert len({f["key"] for r in records for f in r["facts"]}) >= 5


async def test_an_unchanged_pack_changes_no_decision(log_dir: Path, tmp_path: Path) -> None:
    report = await _replay(log_dir, tmp_path, ACME)
    totals = report.totals()
    assert totals["turns"] >= 500 and totals["replayed"] == totals["turns"]
    assert report.changed == []
    # Every model prompt was the logged one, and every tool call was found in the log.
    assert totals["model_changed"] == 0 and totals["would_call"] == 0
    assert "0 of" in report.to_text()


async def test_a_raised_gate_reports_exactly_the_reads_that_cross_it(
    log_dir: Path, records: list[dict[str, Any]], tmp_path: Path
) -> None:
    pack = _pack_copy(tmp_path)
    with (pack / "gates.yaml").open("a", encoding="utf-8") as f:
        f.write("sentiment: 0.8\n")
    # Independently, from the log: the sentiment reads that acted at 0.6 and fall short of 0.8.
    expected = {
        (r["conversation_id"], r["seq"])
        for r in records
        for read in r["reads"]
        if read["head"] == "sentiment" and read["threshold"] <= read["confidence"] < 0.8
    }
    assert len(expected) > 20
    report = await _replay(log_dir, tmp_path, pack)
    crossed = [t for t in report.turns if t.crossed]
    assert _where(crossed) == expected
    for turn in crossed:
        [read] = turn.crossed
        assert read["head"] == "sentiment" and read["threshold"] == [0.6, 0.8]
        assert read["outcome"] == ["act", "unsure"]
        assert turn.changes["reads"] == {
            "before": ["sentiment: act"],
            "after": ["sentiment: unsure"],
        }


async def test_a_changed_faq_answer_reports_exactly_the_turns_that_cited_it(
    log_dir: Path, records: list[dict[str, Any]], tmp_path: Path
) -> None:
    pack = _pack_copy(tmp_path)
    faq = pack / "faq.yaml"
    old = "The reset link is valid for one hour."
    assert old in faq.read_text("utf-8")
    faq.write_text(faq.read_text("utf-8").replace(old, "The reset link is valid for two hours."))
    cited = {
        (r["conversation_id"], r["seq"])
        for r in records
        if any(f["key"] == "faq-password" for f in r["facts"])
    }
    assert len(cited) >= 5
    report = await _replay(log_dir, tmp_path, pack)
    assert _where(report.changed) == cited
    for turn in report.changed:
        assert set(turn.changes) == {"reply"}
        assert "two hours" in turn.changes["reply"]["after"]
        assert "reply" in turn.model_changed  # the prompt held the new answer


def _invoke(args: list[str], data_dir: Path) -> Any:
    runner = CliRunner()
    return runner.invoke(cli, ["replay", *args], env={"GATEBOT_DATA_DIR": str(data_dir)})


def _password_conversations(records: list[dict[str, Any]], n: int) -> list[str]:
    ids = []
    for r in records:
        if any(f["key"] == "faq-password" for f in r["facts"]) and r["conversation_id"] not in ids:
            ids.append(r["conversation_id"])
    return ids[:n]


def test_the_budget_decides_the_exit_code(
    log_dir: Path, records: list[dict[str, Any]], tmp_path: Path
) -> None:
    pack = _pack_copy(tmp_path)
    faq = pack / "faq.yaml"
    faq.write_text(faq.read_text("utf-8").replace("one hour", "two hours"))
    chosen = _password_conversations(records, 2)
    n = sum(
        any(f["key"] == "faq-password" for f in r["facts"])
        for r in records
        if r["conversation_id"] in chosen
    )
    ids, jsonl = ",".join(chosen), str(log_dir / "turns.jsonl")
    over = _invoke(["--pack", str(pack), "--from-jsonl", jsonl, "--conversations", ids], tmp_path)
    assert over.exit_code == 1, over.output
    assert f"replay: {n} turn(s) changed their decisions, over the budget of 0" in over.output
    html = tmp_path / "out" / "report.html"
    args = ["--pack", str(pack), "--conversations", ids, "--budget", str(n), "--json"]
    within = _invoke([*args, "--html", str(html)], log_dir)  # the store this time
    assert within.exit_code == 0, within.output
    body = json.loads(within.output)
    assert body["totals"]["changed"] == n and body["totals"]["by_decision"]["reply"] == n
    page = html.read_text("utf-8")
    assert page.startswith("<!doctype html>") and "two hours" in page and "<script" not in page


def test_bad_input_is_a_clear_error(log_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"conversation_id": "a", "seq": 1, "message": {"text": "hi"}}\nnot json\n')
    with pytest.raises(LogError, match=r"bad.jsonl:2: not JSON"):
        from_jsonl(bad)
    with pytest.raises(LogError, match="nonesuch"):
        from_jsonl(log_dir / "turns.jsonl", ["nonesuch"])
    both = _invoke(
        ["--pack", str(ACME), "--from-jsonl", str(bad), "--since", "2026-01-01"], tmp_path
    )
    assert both.exit_code == 2 and "--since" in both.output
    none = _invoke(["--pack", str(ACME)], tmp_path / "empty")
    assert none.exit_code != 0 and "no store" in str(none.exception or none.output)


def test_the_store_is_read_by_date_and_id(log_dir: Path, records: list[dict[str, Any]]) -> None:
    from datetime import UTC, datetime, timedelta

    store = Store(f"sqlite:///{log_dir / 'gatebot.db'}")
    try:
        everything = from_store(store)
        assert sum(len(c.turns) for c in everything) == len(records)
        assert from_store(store, since=datetime.now(UTC) + timedelta(days=1)) == []
        [one] = from_store(store, ids=["log-0002"])
        assert [t["seq"] for t in one.turns] == list(range(1, len(one.turns) + 1))
    finally:
        store.close()


async def test_a_tool_that_changes_anything_never_runs(
    log_dir: Path, records: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refund the log made is handed back from the log; a refund the log has no result for
    (an older record) is reported as "would call". The orders API sees no request either way."""
    refunded = next(
        r["conversation_id"]
        for r in records
        for e in r["tools"]
        if e["tool"] == "orders.refund_order" and e["event"] == "finished"
    )
    seen: list[str] = []

    async def count(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.json_response({"error": "replay must not call"}, status=500)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", count)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    monkeypatch.setenv("ACME_ORDERS_URL", f"http://127.0.0.1:{port}/demo-api")
    try:
        kept = await _replay(log_dir, tmp_path, ACME, ids=[refunded])
        assert kept.changed == [] and kept.totals()["would_call"] == 0
        # The same conversation as an older record would hold it: no result kept for the refund.
        older = tmp_path / "older.jsonl"
        lines = [json.loads(json.dumps(r)) for r in records if r["conversation_id"] == refunded]
        for r in lines:
            for e in r["tools"]:
                if e["tool"] == "orders.refund_order":
                    e["detail"].pop("call", None)
        older.write_text("".join(json.dumps(r) + "\n" for r in lines))
        report = await replay(from_jsonl(older), ACME, _settings(tmp_path, ACME))
    finally:
        await runner.cleanup()
    assert seen == []
    [turn] = [t for t in report.turns if t.would_call]
    assert [c["tool"] for c in turn.would_call] == ["orders.refund_order"]
    assert "would call orders.refund_order" in turn.changes["tools"]["after"]
    assert report.totals()["would_call"] == 1


def test_the_html_report_escapes_what_it_shows() -> None:
    turn = TurnDiff("c<1>", 3, "<img src=x onerror=alert(1)>")
    turn.changes["reply"] = {"before": "<b>old</b>", "after": "</td><script>x()</script>"}
    turn.would_call.append({"tool": "t", "arguments": {"a": "<i>"}})
    page = ReplayReport("acme 1", "<log>", [turn], conversations=1).to_html()
    assert "<script" not in page and "<img" not in page and "<b>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "&lt;/td&gt;&lt;script&gt;" in page
    assert "http://" not in page and "https://" not in page  # nothing loaded from elsewhere
    assert WOULD_CALL.startswith("replay:")


async def test_a_call_is_recorded_for_replay_but_never_sent_live() -> None:
    """The record keeps a call's arguments and result; the live event (the widget's) does not."""
    from bot.extend.tool import RECORDED_CALL, Tool, ToolRegistry, ToolRunner

    class Lookup(Tool):
        name, schema = "lookup", {"type": "object"}

        async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
            return {"found": arguments["id"], "note": "found it"}

    registry = ToolRegistry()
    registry.add(Lookup())
    live: list[dict[str, Any]] = []
    outcome = await ToolRunner(registry, live.append).call("lookup", {"id": "7"}, {})
    [finished] = [e for e in outcome.events if e["event"] == "finished"]
    assert finished["detail"][RECORDED_CALL] == {
        "arguments": {"id": "7"},
        "result": {"found": "7", "note": "found it"},
    }
    assert live and all(RECORDED_CALL not in e["detail"] for e in live)
    assert next(e for e in live if e["event"] == "finished")["detail"]["note"] == "found it"


async def test_a_stored_log_replays_on_sqlite_and_postgres(
    database_url: str, tmp_path: Path
) -> None:
    """Turns stored by a running app (either database) are read by date and id and replayed."""
    from datetime import UTC, datetime, timedelta

    from bot.app import App

    settings = Settings(pack=ACME, data_dir=tmp_path, database_url=database_url, recorders=[])
    app = App(settings)
    await app.start(channels=False)
    try:
        convs = [app.store.create_conversation("web")[0] for _ in range(2)]
        for n, text in enumerate(["Is there a free trial?", "How do I reset my password?"]):
            await app.agent.handle(convs[0], text, f"a{n}")
        await app.agent.handle(convs[1], "hello there", "b0")
        hour_ago = datetime.now(UTC) - timedelta(hours=1)
        both = from_store(app.store, since=hour_ago)
        assert {c.id for c in both} == {c.id for c in convs}
        assert from_store(app.store, since=datetime.now(UTC) + timedelta(days=1)) == []
        [first] = from_store(app.store, ids=[convs[0].id])
        assert [t["message"]["text"] for t in first.turns] == [
            "Is there a free trial?",
            "How do I reset my password?",
        ]
    finally:
        await app.stop()
    report = await replay(both, ACME, _settings(tmp_path, ACME))
    assert report.totals()["replayed"] == 3 and report.changed == []
