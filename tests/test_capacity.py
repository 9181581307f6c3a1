"""Serving many customers at once: turns beyond the process's limit are shed with 503 at once,
and a database that stops answering is answered with 503 within 5 s while static pages serve."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer
from gatebot_web.server import build_web_app

from bot.app import App
from bot.config import Settings
from bot.errors import DatabaseUnavailable
from bot.extend.recorder import Recorder
from bot.store import Store
from bot.store.runner import StoreRunner

ACME = Path(__file__).resolve().parent.parent / "knowledge" / "acme"


class HeldRecorder(Recorder):
    """Holds every turn at its end (after it is stored) until released: turns stay in flight."""

    name = "held"

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.holding = 0

    async def record(self, turn: Mapping[str, Any]) -> None:
        self.holding += 1
        await self.release.wait()


@contextlib.asynccontextmanager
async def serving(settings: Settings, recorders: list[Recorder]) -> AsyncIterator[TestClient]:
    app = App(settings, recorders=recorders)
    await app.start(channels=False)
    try:
        async with TestClient(TestServer(build_web_app(app), host="127.0.0.1")) as client:
            yield client
    finally:
        await app.stop()


async def open_conversation(client: TestClient) -> tuple[str, dict[str, str]]:
    body = await (await client.post("/api/conversations")).json()
    return body["id"], {"Authorization": f"Bearer {body['token']}"}


def send(client: TestClient, cid: str, auth: dict[str, str], text: str, client_id: str) -> Any:
    return client.post(
        f"/api/conversations/{cid}/messages",
        headers=auth,
        json={"text": text, "client_message_id": client_id},
    )


async def test_turns_beyond_the_limit_are_shed_at_once_and_counted(tmp_path: Path) -> None:
    held = HeldRecorder()
    settings = Settings(pack=ACME, data_dir=tmp_path, recorders=[], max_turns=2)
    async with serving(settings, [held]) as client:
        first, second, third = [await open_conversation(client) for _ in range(3)]
        running = [
            asyncio.ensure_future(send(client, *conv, "hello", "m1")) for conv in (first, second)
        ]
        for _ in range(400):  # bounded: both turns reach their end and wait there
            if held.holding == 2:
                break
            await asyncio.sleep(0.05)
        assert held.holding == 2
        shed = await send(client, *third, "what does it cost?", "m1")
        assert shed.status == 503 and shed.headers["Retry-After"] == "1"
        assert (await shed.json())["error"]["code"] == "overloaded"
        assert not any(task.done() for task in running)  # answered while both still ran
        metrics = await (await client.get("/metrics")).text()
        assert "gatebot_turns_in_flight 2" in metrics
        assert "gatebot_turns_shed_total 1" in metrics
        assert "gatebot_turns_in_flight_limit 2" in metrics
        held.release.set()
        assert [(await task).status for task in running] == [200, 200]
        again = await send(client, *third, "what does it cost?", "m1")  # the widget's retry
        assert again.status == 200 and (await again.json())["duplicate"] is False
        shown = await (await client.get(f"/api/conversations/{third[0]}", headers=third[1])).json()
        assert [m["role"] for m in shown["messages"]] == ["customer", "agent"]  # one turn
        assert "gatebot_turns_in_flight 0" in await (await client.get("/metrics")).text()


async def test_a_call_past_its_deadline_fails_and_the_next_is_refused_until_retry(
    tmp_path: Path,
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    runner = StoreRunner(store, deadline=0.2, retry_after=0.5)
    try:
        with pytest.raises(DatabaseUnavailable, match=r"did not answer within 0\.2 s"):
            await runner.call(time.sleep, 1.0)
        ran: list[int] = []
        with pytest.raises(DatabaseUnavailable, match="not answering") as refused:
            await runner.call(ran.append, 1)
        assert ran == [] and refused.value.retry_after == 0.5  # refused without running
        for _ in range(100):  # bounded: after retry_after the runner tries again
            await asyncio.sleep(0.1)
            with contextlib.suppress(DatabaseUnavailable):
                await runner.call(ran.append, 2)
                break
        assert ran == [2]
    finally:
        runner.close()
        store.close()


class StoppableProxy:
    """A loopback TCP proxy to PostgreSQL that can stop forwarding: it keeps accepting and holds
    every byte (a database host that black-holes its traffic), and forwards again when resumed."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.forwarding = asyncio.Event()
        self.forwarding.set()
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        pumps = [self._pump(reader, up_writer), self._pump(up_reader, writer)]
        for pump in pumps:
            task = asyncio.ensure_future(pump)
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                await self.forwarding.wait()
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


@pytest.fixture
async def pg_schema(postgres: str) -> AsyncIterator[str]:
    import psycopg

    plain, schema = postgres.replace("+psycopg", ""), "gatebot_test_" + secrets.token_hex(4)
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield schema
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


async def test_a_black_holed_database_is_answered_503_within_5_s_and_static_pages_serve(
    tmp_path: Path, pg_schema: str
) -> None:
    proxy = StoppableProxy(5432)
    port = await proxy.start()
    url = f"postgresql://root@127.0.0.1:{port}/test?options=-csearch_path%3D{pg_schema}"
    settings = Settings(pack=ACME, data_dir=tmp_path, recorders=[], database_url=url)
    try:
        async with serving(settings, []) as client:
            cid, auth = await open_conversation(client)
            assert (await send(client, cid, auth, "hello", "m1")).status == 200
            proxy.forwarding.clear()  # the database host stops answering
            within_5_s = aiohttp.ClientTimeout(total=5)
            turn = asyncio.ensure_future(
                client.post(
                    f"/api/conversations/{cid}/messages",
                    headers=auth,
                    json={"text": "what does it cost?", "client_message_id": "m2"},
                    timeout=within_5_s,
                )
            )
            widget = await client.get("/widget.js", timeout=within_5_s)
            assert widget.status == 200 and not turn.done()  # served while the turn waits
            answered = await turn
            assert answered.status == 503 and int(answered.headers["Retry-After"]) >= 1
            assert (await answered.json())["error"]["code"] == "database_unavailable"
            health = await client.get("/healthz", timeout=within_5_s)
            assert health.status == 503
            assert (await client.get("/", timeout=within_5_s)).status == 200
            proxy.forwarding.set()  # back: the same message goes through on a retry
            for _ in range(100):  # bounded: until the refusal window has passed
                retried = await send(client, cid, auth, "what does it cost?", "m2")
                if retried.status != 503:
                    break
                await asyncio.sleep(0.2)
            assert retried.status == 200
    finally:
        await proxy.close()
