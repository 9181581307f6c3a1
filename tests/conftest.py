"""Shared fixtures: a temporary data dir per test, the app on SQLite and on PostgreSQL, a real
aiohttp server on loopback for the REST API, and the sample pack loaded once for stage tests that
build no App."""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import App
from bot.config import Settings
from bot.extend.recorder import MemoryRecorder
from bot.packs import Pack, load_pack
from tests import record_check

# Torch on one thread unless the runner says otherwise (subprocesses inherit it): the tests embed
# a few hundred short texts at most, which gain nothing from splitting, while on a busy two-core
# machine threads waiting on each other made each encode two to four times slower.
os.environ.setdefault("GATEBOT_TORCH_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
ACME = ROOT / "knowledge" / "acme"
PG_URL = os.environ.get("GATEBOT_TEST_PG", "postgresql+psycopg://root@127.0.0.1:5432/test")


def _postgres_reason() -> str | None:
    """Why PostgreSQL tests cannot run here, or None when they can."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed"
    try:
        with psycopg.connect(PG_URL.replace("+psycopg", ""), connect_timeout=3):
            return None
    except Exception as exc:
        return f"PostgreSQL not reachable at {PG_URL}: {exc}"


@pytest.fixture(scope="session")
def postgres() -> str:
    """The PostgreSQL URL, when the server is reachable. CI has one, so there it must be."""
    reason = _postgres_reason()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the PostgreSQL tests: {reason}")
        pytest.skip(reason)
    return PG_URL


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Each test on SQLite, and on PostgreSQL in a schema of its own, dropped afterwards."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'gatebot.db'}"
        return
    yield request.getfixturevalue("postgres_schema_url")


@pytest.fixture
def postgres_schema_url(postgres: str) -> Iterator[str]:
    """PostgreSQL in a schema of its own, dropped afterwards (for tests of PostgreSQL alone)."""
    import psycopg

    plain = postgres.replace("+psycopg", "")
    schema = "gatebot_test_" + secrets.token_hex(4)
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{postgres}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(scope="session")
def pack() -> Pack:
    """The sample pack, loaded once: stage tests read it and never change it."""
    return load_pack(ACME)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(pack=ACME, data_dir=tmp_path, recorders=[])


@pytest.fixture
def memory() -> MemoryRecorder:
    return MemoryRecorder()


@pytest.fixture
async def app(settings: Settings, memory: MemoryRecorder) -> AsyncIterator[App]:
    gb = App(settings, recorders=[memory])
    await gb.start(channels=False)
    try:
        yield gb
    finally:
        await gb.stop()


@pytest.fixture
async def client(app: App) -> AsyncIterator[TestClient]:
    """The widget's REST API on a real aiohttp server bound to 127.0.0.1."""
    from gatebot_web.server import build_web_app

    server = TestServer(build_web_app(app), host="127.0.0.1")
    async with TestClient(server) as test_client:
        yield test_client


@pytest.fixture(scope="session", autouse=True)
def warm_heads() -> None:
    """Load the sentence encoder once, before any test: the first load takes seconds, which must
    not land inside a test's bounded wait (Slack's three-second acknowledgement, for one)."""
    from bot.turn.reading import Readers

    readers = Readers(load_pack(ACME))
    for head in (readers.intent_head, readers.sentiment_head):
        if head is not None:
            head.predict(["hello"])


@pytest.fixture
async def flow_client(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[TestClient, App]]:
    """The sample pack with every first-party plugin: its flows call the real API catalog, which
    calls the demo orders API the bot serves itself."""
    from gatebot_web.server import build_web_app

    monkeypatch.delenv("ACME_ORDERS_TOKEN", raising=False)
    settings.admin_token = "staff-secret-token"  # tests/test_flows_api.py's ADMIN
    gb = App(settings, recorders=[MemoryRecorder()])
    await gb.start(channels=False)
    try:
        async with TestClient(TestServer(build_web_app(gb), host="127.0.0.1")) as client:
            monkeypatch.setenv("ACME_ORDERS_URL", str(client.make_url("/demo-api")))
            yield client, gb
    finally:
        await gb.stop()


# -- every turn record the suite produces conforms to docs/turn-record.schema.json -----------------


def pytest_configure(config: pytest.Config) -> None:
    record_check.install()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    record_check.take()  # what an earlier test's teardown produced is not this test's


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    result = yield
    found = record_check.take()
    if found:
        shown = "\n  ".join(found[:20]) + (
            f"\n  ... and {len(found) - 20} more" if found[20:] else ""
        )
        raise AssertionError(f"turn records break docs/turn-record.schema.json:\n  {shown}")
    return result


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    done = record_check.checked
    if done["records"]:
        terminalreporter.write_line(
            f"turn records validated against the schema: {done['records']} "
            f"in {done['seconds']:.2f} s"
        )


#: Test files whose servers must never call the store on the event loop (bot/store/guard.py).
STORE_GUARDED = {
    "test_agent.py",
    "test_api.py",
    "test_app.py",
    "test_discord.py",
    "test_flows.py",
    "test_flows_api.py",
    "test_flow_triggers.py",
    "test_helpdesk.py",
    "test_inspector.py",
    "test_inspector_pages.py",
    "test_inspector_sessions.py",
    "test_repeat.py",
    "test_retention.py",
    "test_slack.py",
    "test_email.py",
    "test_customer_data.py",
    "test_outcomes_api.py",
    "test_ownership.py",
    "test_identity.py",
}


@pytest.fixture(autouse=True)
def store_guard(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """In the files above, a Store method called on a thread running an event loop (by the
    server's code, not the test's own setup) fails the test with the line that made it."""
    if request.node.path.name not in STORE_GUARDED:
        yield []
        return
    from bot.store.guard import install

    caught: list[str] = []
    uninstall = install(caught.append)
    try:
        yield caught
    finally:
        uninstall()
    if caught:
        pytest.fail("store calls on the event loop:\n" + "\n".join(sorted(set(caught))))
