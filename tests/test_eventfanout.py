"""Live events across processes through Redis: two buses on a real Redis stand for two
processes; a closed port and a proxy that drops every connection stand for an outage."""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.config import Settings
from bot.eventfanout import RedisEventBus, event_bus
from bot.events import EventBus
from bot.metrics import Metrics
from tests.redis_fixture import redis_url  # noqa: F401  (a fixture)

WAIT = 10.0


def client_for(url: str) -> Any:
    from bot.redisconn import redis_client

    return redis_client(Settings(redis_url=url))


async def started(url: str, channel: str) -> RedisEventBus:
    bus = RedisEventBus(client_for(url), channel=channel, metrics=Metrics())
    await bus.start()
    return bus


@pytest.fixture
async def pair(redis_url: str) -> AsyncIterator[tuple[RedisEventBus, RedisEventBus]]:  # noqa: F811
    channel = "gatebot:test:" + secrets.token_hex(4)  # tests running together stay apart
    a, b = await started(redis_url, channel), await started(redis_url, channel)
    try:
        assert a.connected and b.connected
        yield a, b
    finally:
        await a.stop()
        await b.stop()


async def test_an_event_published_in_one_process_reaches_a_subscriber_in_another(
    pair: tuple[RedisEventBus, RedisEventBus],
) -> None:
    a, b = pair
    queue = a.subscribe("conv-1")
    b.publish("conv-1", {"type": "replies", "replies": [{"text": "from B"}]})
    got = await asyncio.wait_for(queue.get(), WAIT)
    assert got == {"type": "replies", "replies": [{"text": "from B"}]}
    b.publish("conv-2", {"type": "other conversation"})
    b.publish("conv-1", {"type": "second"})
    assert (await asyncio.wait_for(queue.get(), WAIT))["type"] == "second"


async def test_a_process_sees_its_own_event_once_not_again_from_redis(
    pair: tuple[RedisEventBus, RedisEventBus],
) -> None:
    a, b = pair
    mine, theirs = a.subscribe("conv-1"), b.subscribe("conv-1")
    a.publish("conv-1", {"type": "one"})
    assert mine.get_nowait() == {"type": "one"}  # at once, not through Redis
    assert await asyncio.wait_for(theirs.get(), WAIT) == {"type": "one"}
    # B has it, so Redis has delivered it to A as well by now, and A skipped it. A marker sent
    # after it arrives after it: nothing else in A's queue proves the echo was dropped.
    a.publish("conv-1", {"type": "marker"})
    await asyncio.wait_for(theirs.get(), WAIT)
    b.publish("conv-1", {"type": "from B"})
    assert await asyncio.wait_for(mine.get(), WAIT) == {"type": "marker"}
    assert await asyncio.wait_for(mine.get(), WAIT) == {"type": "from B"}
    assert mine.empty()


async def test_a_malformed_message_on_the_channel_is_ignored(
    pair: tuple[RedisEventBus, RedisEventBus],
) -> None:
    a, _ = pair
    queue = a.subscribe("conv-1")
    for junk in (b"not json", b"[]", b'{"origin": "x"}', b'{"origin":"x","conversation":1}'):
        a.receive(junk)
    assert queue.empty()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_without_redis_a_turn_still_publishes_to_this_process_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.eventfanout")
    bus = await started(f"redis://127.0.0.1:{closed_port()}/0", "gatebot:test:down")
    try:
        assert not bus.connected  # start returned all the same
        queue = bus.subscribe("conv-1")
        for n in range(3):
            bus.publish("conv-1", {"n": n})  # never raises, never waits
        assert [queue.get_nowait()["n"] for _ in range(3)] == [0, 1, 2]
        await asyncio.sleep(1.0)  # a few reconnect attempts, each refused
        down = [r for r in caplog.records if "unreachable" in r.getMessage()]
        assert len(down) == 1
        assert bus._metrics is not None
        assert "gatebot_events_redis_connected 0" in bus._metrics.render()
    finally:
        await bus.stop()


def test_the_in_memory_bus_stays_the_default_without_redis() -> None:
    assert type(event_bus(Settings())) is EventBus
    assert isinstance(event_bus(Settings(redis_url="redis://127.0.0.1:1/0")), RedisEventBus)


class Proxy:
    """A TCP relay to Redis that a test can cut (every connection dropped, the port closed)
    and restore on the same port: a Redis outage without touching the shared server."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target, self.port = target, 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        await self._server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self._writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except OSError:
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def wait_until(check: Any) -> None:
    async def poll() -> None:
        while not check():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), WAIT * 2)


async def test_after_an_outage_the_bus_reconnects_and_shares_again(
    redis_url: str,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    from urllib.parse import urlsplit

    caplog.set_level(logging.WARNING, logger="bot.eventfanout")
    where = urlsplit(redis_url)
    proxy = Proxy((where.hostname or "127.0.0.1", where.port or 6379))
    await proxy.start()
    channel = "gatebot:test:" + secrets.token_hex(4)
    a = await started(f"redis://127.0.0.1:{proxy.port}/0", channel)
    b = await started(redis_url, channel)
    try:
        assert a.connected
        queue = a.subscribe("conv-1")
        await proxy.cut()
        await wait_until(lambda: not a.connected)
        a.publish("conv-1", {"during": "outage"})  # delivered here all the same
        assert queue.get_nowait() == {"during": "outage"}
        await proxy.start()
        await wait_until(lambda: a.connected)
        b.publish("conv-1", {"after": "outage"})
        assert await asyncio.wait_for(queue.get(), WAIT) == {"after": "outage"}
        said = [r.getMessage() for r in caplog.records]
        assert sum("unreachable" in m for m in said) == 1
        assert sum("shared again" in m for m in said) == 1
    finally:
        await a.stop()
        await b.stop()
        await proxy.cut()


async def test_a_turn_runs_and_its_events_show_here_while_redis_is_down(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from bot.app import App
    from tests.conftest import ACME

    caplog.set_level(logging.WARNING, logger="bot.eventfanout")
    down = f"redis://127.0.0.1:{closed_port()}/0"
    gb = App(Settings(pack=ACME, data_dir=tmp_path, recorders=[], redis_url=down))
    await gb.start(channels=False)
    try:
        assert isinstance(gb.events, RedisEventBus) and not gb.events.connected
        conv, _ = gb.store.create_conversation("web", with_token=True)
        queue = gb.events.subscribe(conv.id)
        result = await gb.agent.handle(conv, "Does Pipelines support Docker builds?", "m1")
        assert result.replies
        kinds = [queue.get_nowait()["type"] for _ in range(queue.qsize())]
        assert kinds[0] == "message" and "reply" in kinds
        assert sum("unreachable" in r.getMessage() for r in caplog.records) == 1
    finally:
        await gb.stop()
