"""Connection leases on real Redis and PostgreSQL: one holder among contenders, a clean stop
hands over at once, a killed holder's lease moves within 30 s, and Slack's Socket Mode opens in
the holding process only. Every wait is bounded."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import Settings
from bot.lease import Lease, PostgresLease, RedisLease, connection_lease
from bot.leasekeeper import LeasedConnection
from bot.store import Store
from tests.conftest import ROOT
from tests.redis_fixture import (
    fresh_schema,
    redis_url,  # noqa: F401  (a fixture)
)

#: A bound on a takeover: the lease's 15 s expiry, a 3 s retry, and a loaded machine's slack.
TAKEOVER_S = 30.0


@pytest.fixture
def pg_url(postgres: str) -> Iterator[str]:
    """PostgreSQL in a fresh schema: the lock's key names the schema, so tests stay apart."""
    with fresh_schema(postgres) as url:
        yield url


@pytest.fixture
def isolated_redis(redis_url: str) -> str:  # noqa: F811
    """A random Redis database: leases and events of tests running at once stay apart."""
    return redis_url.rsplit("/", 1)[0] + f"/{secrets.randbelow(15) + 1}"


class Recorder:
    def __init__(self) -> None:
        self.log: list[str] = []

    def steps(self, who: str) -> tuple[object, object]:
        async def connect() -> None:
            self.log.append(f"{who} connected")

        async def disconnect() -> None:
            self.log.append(f"{who} disconnected")

        return connect, disconnect


async def until(check: object, timeout: float = TAKEOVER_S) -> None:
    async def poll() -> None:
        while not check():  # type: ignore[operator]
            await asyncio.sleep(0.1)

    await asyncio.wait_for(poll(), timeout)


def make_lease(kind: str, url: str, name: str) -> Lease:
    if kind == "redis":
        return connection_lease(name, Settings(redis_url=url), Store("sqlite://"))
    return connection_lease(name, Settings(), Store(url))


@pytest.fixture(params=["redis", "postgres"])
def where(request: pytest.FixtureRequest) -> tuple[str, str]:
    if request.param == "redis":
        return "redis", request.getfixturevalue("isolated_redis")
    return "postgres", request.getfixturevalue("pg_url")


async def test_one_holder_and_a_clean_stop_hands_over(where: tuple[str, str]) -> None:
    kind, url = where
    name = "test-" + secrets.token_hex(4)
    rec = Recorder()
    a = LeasedConnection(make_lease(kind, url, name), *rec.steps("a"))  # type: ignore[arg-type]
    b = LeasedConnection(make_lease(kind, url, name), *rec.steps("b"))  # type: ignore[arg-type]
    assert isinstance(a.lease, RedisLease if kind == "redis" else PostgresLease)
    await a.start()
    await b.start()
    try:
        assert a.held and not b.held and rec.log == ["a connected"]
        await a.stop()
        await until(lambda: b.held)
        assert rec.log == ["a connected", "a disconnected", "b connected"]
    finally:
        await a.stop()
        await b.stop()
    assert rec.log[-1] == "b disconnected"


async def test_a_holder_that_loses_its_redis_lease_disconnects(isolated_redis: str) -> None:
    import redis.asyncio as aioredis

    from bot import leasekeeper

    name = "test-" + secrets.token_hex(4)
    rec = Recorder()
    a = LeasedConnection(make_lease("redis", isolated_redis, name), *rec.steps("a"))  # type: ignore[arg-type]
    await a.start()
    other = aioredis.Redis.from_url(isolated_redis)
    try:
        await other.set(f"gatebot:lease:{name}", "another-process", px=60_000)
        # The next renewal finds another token: this process lets the connection go.
        await until(lambda: not a.held, leasekeeper.RENEW_S * 4)
        assert rec.log == ["a connected", "a disconnected"]
    finally:
        await a.stop()
        await other.delete(f"gatebot:lease:{name}")
        await other.aclose()
    assert rec.log == ["a connected", "a disconnected"]  # stopping does not disconnect twice


def test_sqlite_is_one_process_so_it_always_holds(tmp_path: Path) -> None:
    lease = connection_lease("x", Settings(), Store(f"sqlite:///{tmp_path / 'g.db'}"))
    assert type(lease) is Lease and lease.kind == "local"


# -- two processes, and the holder killed ----------------------------------------------------


def contender(env: dict[str, str], name: str, out: Path) -> subprocess.Popen[bytes]:
    clean = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    with out.open("wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.lease_contender", name],
            cwd=ROOT,
            env={**clean, "PYTHONPATH": os.pathsep.join(sys.path), **env},
            stdout=sink,
            stderr=subprocess.STDOUT,
        )


def wait_for_line(out: Path, word: str, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while word not in out.read_text():
        if proc.poll() is not None and word not in out.read_text():
            pytest.fail(f"contender exited {proc.returncode}:\n{out.read_text()}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {word} within {timeout:.0f}s:\n{out.read_text()}")
        time.sleep(0.1)


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)


def test_the_lease_moves_when_its_holder_is_killed(
    where: tuple[str, str], tmp_path: Path, procs: list[subprocess.Popen[bytes]]
) -> None:
    kind, url = where
    env = {"REDIS_URL": url} if kind == "redis" else {"DATABASE_URL": url}
    name = "test-" + secrets.token_hex(4)
    outs = [tmp_path / "first.out", tmp_path / "second.out"]
    procs.append(contender(env, name, outs[0]))
    wait_for_line(outs[0], "HOLDING", procs[0], 60)
    procs.append(contender(env, name, outs[1]))
    wait_for_line(outs[1], "STARTED", procs[1], 60)
    assert "HOLDING" not in outs[1].read_text()  # one holder at a time
    procs[0].send_signal(signal.SIGKILL)  # no release: the lease must lapse or drop on its own
    procs[0].wait(timeout=10)
    wait_for_line(outs[1], "HOLDING", procs[1], TAKEOVER_S)


# -- a real adapter: Slack's Socket Mode ------------------------------------------------------


async def test_slack_socket_mode_opens_only_in_the_process_holding_the_lease(
    isolated_redis: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gatebot_slack

    from bot.app import App
    from tests.conftest import ACME
    from tests.slack_server import SlackServer

    slack = SlackServer()
    await slack.start()
    for name in ("SLACK_MODE", "SLACK_SIGNING_SECRET", "SLACK_CLIENT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SLACK_API_URL", slack.api_url)
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-test")
    apps = [
        App(
            Settings(
                pack=ACME,
                data_dir=tmp_path / who,
                recorders=[],
                channels=["slack"],
                redis_url=isolated_redis,
            ),
            extra_plugins=[gatebot_slack],
        )
        for who in ("a", "b")
    ]
    try:
        for app in apps:
            await app.start()
        # Both serve Slack (the Web API), one holds the websocket.
        assert all(app.channel("slack") is not None for app in apps)
        assert len(slack.calls_to("apps.connections.open")) == 1
        held = 'gatebot_connection_lease_held{connection="slack-socket"}'
        assert f"{held} 1" in apps[0].metrics.render()
        assert f"{held} 0" in apps[1].metrics.render()
        await apps[0].stop()  # a clean stop lets the lease go: the other opens the socket
        await slack.wait_for("apps.connections.open", count=2, timeout=TAKEOVER_S)
        await until(lambda: f"{held} 1" in apps[1].metrics.render())
        event = {"type": "message", "channel": "D1", "channel_type": "im", "user": "U1"}
        event.update(text="Does Pipelines support Docker builds?", ts="100.1")
        payload = {"type": "event_callback", "event_id": "Ev1", "team_id": "T1", "event": event}
        envelope = await slack.send_envelope(payload)
        assert (await slack.next_ack())["envelope_id"] == envelope
        (post,) = await slack.wait_for("chat.postMessage", channel="D1", timeout=TAKEOVER_S)
        assert post.body["thread_ts"] == "100.1"
    finally:
        for app in apps:
            await app.stop()
        await slack.stop()


# -- a real adapter: Discord's gateway --------------------------------------------------------


async def test_discord_connects_the_gateway_only_in_the_lease_holder(
    isolated_redis: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import discord
    from gatebot_discord.channel import DiscordChannel, intents

    from bot.app import App
    from tests.conftest import ACME

    class StandIn(discord.Client):
        """Records what the adapter asked for: the gateway (start) or the REST API (login)."""

        def __init__(self) -> None:
            super().__init__(intents=intents())
            self.calls: list[str] = []
            self.closed = asyncio.Event()

        async def login(self, token: str) -> None:
            self.calls.append("login")

        async def start(self, token: str, *, reconnect: bool = True) -> None:
            self.calls.append("gateway")
            self.closed = asyncio.Event()  # a stand-in opens again; a real client is rebuilt
            await self._async_setup_hook()
            self.dispatch("ready")
            await self.closed.wait()

        async def close(self) -> None:
            self.closed.set()

        def is_closed(self) -> bool:
            return self.closed.is_set()

    monkeypatch.setenv("DISCORD_BOT_TOKEN", "secret-token")
    settings = Settings(pack=ACME, data_dir=tmp_path, recorders=[], redis_url=isolated_redis)
    gb = App(settings)
    clients = [StandIn(), StandIn()]
    adapters = [DiscordChannel(gb.host, client=c) for c in clients]
    try:
        for adapter in adapters:
            await asyncio.wait_for(adapter.start(), TAKEOVER_S)
        assert clients[0].calls == ["gateway"]
        assert clients[1].calls == ["login"]  # REST only: staff replies still post from here
        await adapters[0].stop()
        await until(lambda: clients[1].calls == ["login", "gateway"])
        assert adapters[1]._ready.is_set()
    finally:
        for adapter in adapters:
            await adapter.stop()
        gb.store.close()
