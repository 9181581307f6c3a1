"""Two real ``gatebot run`` processes on one PostgreSQL schema and one Redis: a widget's
websocket on one process sees what the other does in its conversation (a customer's turn, a
staff reply through the staff API). Fresh schema, free ports, bounded waits; killed in finally."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.conftest import ACME, ROOT
from tests.redis_fixture import fresh_schema
from tests.redis_fixture import redis_url as redis_url

START_S = 120.0  # a bound on a start on a loaded two-core machine, not a speed check
WAIT_S = 30.0
ADMIN = "staff-" + secrets.token_hex(8)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=2) as resp:
            return bool(json.loads(resp.read())["status"] == "ok")
    except (OSError, ValueError):
        return False


def start_gatebot(env: dict[str, str], data: Path) -> tuple[subprocess.Popen[bytes], str, Path]:
    port = free_port()
    data.mkdir()
    log = data / "server.log"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GATEBOT_", "SLACK_"))}
    run_env = {
        **clean,
        **env,
        "PYTHONPATH": os.pathsep.join(sys.path),  # this checkout's bot and plugins
        "GATEBOT_DATA_DIR": str(data),
        "GATEBOT_PORT": str(port),
        "GATEBOT_HOST": "127.0.0.1",
        "GATEBOT_RECORDERS": "memory",
        "GATEBOT_PACK": str(ACME),
        "GATEBOT_CHANNELS": "web",
        "GATEBOT_ADMIN_TOKEN": ADMIN,
    }
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-c", "from bot.cli import main; main()", "-v", "run"],
            cwd=ROOT,
            env=run_env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_S
    while not healthy(base):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"gatebot run did not come up:\n{log.read_text()}")
        time.sleep(0.3)
    return proc, base, log


@pytest.fixture
def two_processes(
    postgres: str,
    redis_url: str,
    tmp_path: Path,
) -> Iterator[tuple[str, str, str]]:
    redis = redis_url.rsplit("/", 1)[0] + f"/{secrets.randbelow(15) + 1}"
    procs: list[subprocess.Popen[bytes]] = []
    with fresh_schema(postgres) as database:
        env = {"DATABASE_URL": database, "REDIS_URL": redis}
        try:
            # One after the other: the first migrates the fresh schema.
            a, base_a, _ = start_gatebot(env, tmp_path / "a")
            procs.append(a)
            b, base_b, _ = start_gatebot(env, tmp_path / "b")
            procs.append(b)
            yield base_a, base_b, database
        finally:
            for proc in procs:
                proc.kill()
                proc.wait(timeout=30)


async def next_event(ws: aiohttp.ClientWebSocketResponse, wanted: Any) -> dict[str, Any]:
    """The first event ``wanted(event)`` accepts, within WAIT_S."""

    async def read() -> dict[str, Any]:
        while True:
            event = await ws.receive_json()
            if wanted(event):
                return dict(event)

    return await asyncio.wait_for(read(), WAIT_S)


async def test_a_websocket_on_one_process_sees_the_others_turns_and_staff_replies(
    two_processes: tuple[str, str, str],
) -> None:
    base_a, base_b, database = two_processes
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT_S * 2)) as http:
        async with http.post(f"{base_a}/api/conversations") as resp:
            assert resp.status == 201
            conv = await resp.json()
        customer = {"Authorization": f"Bearer {conv['token']}"}
        events_url = f"{base_a}/api/conversations/{conv['id']}/events?token={conv['token']}"
        async with http.ws_connect(events_url) as ws:
            # The customer's message goes to B (a load balancer's choice); A's socket shows it.
            text = "Does Pipelines support Docker builds?"
            async with http.post(
                f"{base_b}/api/conversations/{conv['id']}/messages",
                json={"text": text, "client_message_id": "m1"},
                headers=customer,
            ) as resp:
                assert resp.status == 200, await resp.text()
            seen = await next_event(ws, lambda e: e.get("type") == "message")
            assert seen["text"] == text
            reply = await next_event(ws, lambda e: e.get("type") == "reply")
            assert "Docker" in json.dumps(reply["reply"])

            async with http.post(
                f"{base_b}/api/conversations/{conv['id']}/messages",
                json={"text": "I want to talk to a person", "client_message_id": "m2"},
                headers=customer,
            ) as resp:
                assert resp.status == 200, await resp.text()
            escalation = open_escalation(database)
            staff = {"Authorization": f"Bearer {ADMIN}"}
            async with http.post(
                f"{base_b}/api/staff/escalations/{escalation}/reply",
                json={"staff": "Sam", "text": "Hi, Sam here from process B."},
                headers=staff,
            ) as resp:
                assert resp.status == 200, await resp.text()
            staff_reply = await next_event(ws, lambda e: e.get("type") == "replies")
            assert staff_reply["replies"][0]["text"] == "Hi, Sam here from process B."
            assert staff_reply["replies"][0]["role"] == "staff"


def open_escalation(database: str) -> int:
    """The one open escalation's id, read from the shared database."""
    from bot.store import Store

    store = Store(database)
    try:
        (escalation,) = store.escalations("open")
        return escalation.id or 0
    finally:
        store.close()
