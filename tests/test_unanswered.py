"""``gatebot unanswered`` and :func:`bot.unanswered.unanswered_clusters` on seeded turn records."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from bot.app import App
from bot.cli import cli
from bot.cli.unanswered import parse_since
from bot.errors import GatebotError
from bot.extend.retriever import pack_passages
from bot.packs import Pack
from bot.store import Store
from bot.unanswered import Passage, gather, suggested_question, unanswered_clusters
from tests.conftest import ACME

NOW = datetime.now(UTC)
INVOICES = [
    "How do I export my invoices to CSV?",
    "can I download my invoices as a CSV file",
    "export invoices csv",
]
WEATHER = ["what's the weather in Paris", "what's the weather like in London today"]
ON_PREM = ["Do you offer an on-premise version?", "Do you have an on-premises edition?"]


def record(seq: int, move: str) -> dict[str, Any]:
    """As much of a turn record as the store's columns read."""
    return {
        "seq": seq,
        "reads": [],
        "move": {"name": move, "why": None, "escalate": False},
        "scope": {"verdict": "out" if move == "decline" else "in"},
        "timings": {"total_ms": 1.0},
    }


def seed(store: Store, turns: list[tuple[str, str | None]], days_ago: float = 0.0) -> str:
    """One conversation whose turns read ``turns`` (text, kind or None when it was answered),
    each kept in the state list the agent keeps it in, dated ``days_ago``."""
    conv, _ = store.create_conversation("web")
    lists = {"unanswered": "unanswered", "out_of_scope": "uncovered"}
    for seq, (text, kind) in enumerate(turns, 1):
        received = store.receive_turn(conv.id, "web", f"{conv.id}-{seq}", text)
        if kind is not None:
            conv.state.setdefault(lists[kind], []).append(text)
        conv.turn_count = seq
        move = "decline" if kind == "out_of_scope" else "answer"
        store.complete_turn(conv, received.message, record(seq, move), [], "web")
    when = NOW - timedelta(days=days_ago)
    with store.engine.begin() as db:
        db.execute(sa.text("UPDATE turns SET created_at = :t WHERE conversation_id = :c"),
                   {"t": when, "c": conv.id})  # fmt: skip
        db.execute(sa.text("UPDATE conversations SET updated_at = :t WHERE id = :c"),
                   {"t": when, "c": conv.id})  # fmt: skip
    return conv.id


@pytest.fixture
def store(database_url: str) -> Any:
    made = Store(database_url)
    made.migrate()
    seed(made, [("hi", None), (INVOICES[0], "unanswered"), (WEATHER[0], "out_of_scope")])
    seed(made, [(INVOICES[1], "unanswered"), (ON_PREM[0], "unanswered")], days_ago=2)
    seed(made, [(INVOICES[2], "unanswered"), (WEATHER[1], "out_of_scope")], days_ago=3)
    seed(made, [(ON_PREM[1], "unanswered"), ("Does Pipelines support Docker?", None)], days_ago=20)
    yield made
    made.close()


def acme_passages(pack: Pack) -> list[Passage]:
    return [Passage(f.key, f.title or "", f.text) for f in pack_passages(pack)]


def test_gather_reads_the_state_lists_dated_by_their_turns(store: Store) -> None:
    asked = gather(store)
    assert len(asked) == 7  # the two answered messages are not there
    kinds = {a.text: a.kind for a in asked}
    assert kinds[WEATHER[0]] == kinds[WEATHER[1]] == "out_of_scope"
    assert kinds[INVOICES[0]] == kinds[ON_PREM[1]] == "unanswered"
    assert asked[0].text == ON_PREM[1]  # oldest first
    recent = gather(store, since=NOW - timedelta(days=10))
    assert ON_PREM[1] not in {a.text for a in recent} and len(recent) == 6
    assert gather(store, since=NOW + timedelta(days=1)) == []


def test_clusters_have_counts_examples_and_a_suggestion_each(store: Store, pack: Pack) -> None:
    clusters = unanswered_clusters(store, passages=acme_passages(pack))
    by_question = {c.question: c for c in clusters}
    [invoices] = [c for c in clusters if INVOICES[0] in c.examples]
    assert clusters[0] is invoices  # the largest first
    assert (invoices.count, invoices.kinds, invoices.conversations) == (3, {"unanswered": 3}, 3)
    assert sorted(invoices.examples) == sorted(INVOICES)
    # The pack has an invoices FAQ, yet these went unanswered: the document falls short.
    assert invoices.suggestion == "document_gap"
    assert invoices.nearest is not None and invoices.nearest["key"] == "faq-invoice"
    [weather] = [c for c in clusters if WEATHER[0] in c.examples]
    assert (weather.count, weather.kinds, weather.suggestion) == (2, {"out_of_scope": 2}, "faq")
    [on_prem] = [c for c in clusters if ON_PREM[0] in c.examples]
    assert (on_prem.count, on_prem.suggestion) == (2, "faq")  # nothing in the pack is near
    assert on_prem.question in by_question and on_prem.question.endswith("?")
    assert sum(c.count for c in clusters) == 7
    assert on_prem.first_seen < on_prem.last_seen


def test_since_leaves_older_questions_out_of_the_clusters(store: Store) -> None:
    clusters = unanswered_clusters(store, since=NOW - timedelta(days=10))
    assert sum(c.count for c in clusters) == 6
    assert all(c.suggestion == "faq" for c in clusters)  # no passages given: nothing is near
    assert unanswered_clusters(store, since=NOW + timedelta(days=1)) == []


def test_suggested_question_and_since_parsing() -> None:
    assert suggested_question("  export   invoices csv. ") == "Export invoices csv?"
    assert suggested_question("Is it open?") == "Is it open?"
    assert suggested_question("   ") == ""
    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    assert parse_since("7d", now) == now - timedelta(days=7)
    assert parse_since("24h", now) == now - timedelta(hours=24)
    assert parse_since("2026-11-30") == datetime(2026, 11, 30, tzinfo=UTC)


def run(url: str, *args: str) -> Any:
    env = {
        "DATABASE_URL": url,
        "GATEBOT_PACK": str(ACME),
        "GATEBOT_PLUGINS": "offline",
    }
    return CliRunner().invoke(cli, ["unanswered", *args], env=env)


def test_the_command_prints_a_table_and_json(store: Store, database_url: str) -> None:
    shown = run(database_url)
    assert shown.exit_code == 0, shown.output
    assert "7 unanswered question(s) and out-of-scope request(s), " in shown.output
    lines = shown.output.splitlines()
    first = next(line for line in lines if line.startswith("1 "))
    assert "document gap" in first and "faq-invoice" in first
    assert any("FAQ" in line and "weather" in line.lower() for line in lines)

    as_json = run(database_url, "--json", "--since", "10d")
    assert as_json.exit_code == 0, as_json.output
    report = json.loads(as_json.output)
    assert report["asked"] == 6 and report["since"]
    top = report["clusters"][0]
    assert (top["count"], top["suggestion"], top["kinds"]) == (3, "document_gap", {"unanswered": 3})
    assert set(top) >= {"question", "examples", "conversations", "first_seen", "nearest"}


def test_bad_input_gets_a_clear_error(store: Store, database_url: str, tmp_path: Path) -> None:
    bad = run(database_url, "--since", "last tuesday")
    assert bad.exit_code == 2 and "--since" in bad.output and "7d" in bad.output
    missing = run(f"sqlite:///{tmp_path / 'elsewhere' / 'none.db'}")
    assert isinstance(missing.exception, GatebotError) and "no store at" in str(missing.exception)
    assert not (tmp_path / "elsewhere").exists()  # nothing created where nothing was


async def test_real_turns_fill_what_the_command_reads(app: App) -> None:
    conv = app.store.create_conversation("web")[0]
    declined = await app.agent.handle(conv, WEATHER[0], "m1")
    assert declined.record["move"]["name"] == "decline"
    fresh = app.store.get_conversation(conv.id)
    assert fresh is not None
    # A question the pack has no fact for (as in test_agent): noted, not invented.
    question = "does the mobile app support offline mode"
    await app.agent.handle(fresh, question, "m2")
    asked = gather(app.store)
    assert [(a.text, a.kind) for a in asked] == [
        (WEATHER[0], "out_of_scope"),
        (question, "unanswered"),
    ]
    turns = app.store.turns(conv.id)
    assert [a.at for a in asked] == [t.created_at.replace(tzinfo=UTC) for t in turns]


def test_without_the_encoder_the_command_says_what_to_install(
    store: Store, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bot.unanswered.cluster as cluster

    def missing() -> Any:
        raise ModuleNotFoundError("No module named 'tokenizers'", name="tokenizers")

    monkeypatch.setattr(cluster, "_shipped_encoder", missing)
    result = run(database_url)
    # main() prints a GatebotError as one line and exits 2; CliRunner hands back the error.
    assert isinstance(result.exception, GatebotError)
    said = str(result.exception)
    assert "tokenizers is missing" in said and "gatebot[embeddings]" in said
