"""Several `gatebot run` processes on one PostgreSQL database, as real subprocesses: started at
once on an empty schema, both come up; one message delivered to both at once makes one turn and
both clients get its answer; two messages of one conversation at once get seq 1 and 2; a delivery
whose first turn died with its process runs on the other. With the
PostgreSQL advisory lock, and with a Redis lease (REDIS_URL). Then ``--workers 2`` on PostgreSQL,
and SQLite's refusals: ``--workers 2``, and a second process on the same file."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 180.0
REDIS_URL = "redis://127.0.0.1:6379/0"


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    base: str
    data: Path
    log: Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _exe() -> list[str]:
    return [sys.executable, "-c", "from bot.cli import main; main()"]


def _env(data: Path, port: int, database_url: str, **extra: str) -> dict[str, str]:
    root = str(ROOT)
    path = os.pathsep.join([root, str(ROOT / "plugins"), os.environ.get("PYTHONPATH", "")])
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    return {
        **env,
        "PYTHONPATH": path,
        "GATEBOT_DATA_DIR": str(data),
        "GATEBOT_PORT": str(port),
        "GATEBOT_HOST": "127.0.0.1",
        "GATEBOT_RECORDERS": "jsonl",
        "GATEBOT_CHANNELS": "web",
        "GATEBOT_PACK": str(ROOT / "knowledge" / "acme"),
        "DATABASE_URL": database_url,
        **extra,
    }


def _start(data: Path, env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    data.mkdir(parents=True, exist_ok=True)
    with (data / "server.log").open("wb") as log:
        return subprocess.Popen(
            [*_exe(), "-v", "run", *args], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _wait_healthy(servers: list[Server]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    for server in servers:
        while not _healthy(server.base):
            if server.proc.poll() is not None:
                pytest.fail(
                    f"gatebot run exited {server.proc.returncode}:\n{server.log.read_text()}"
                )
            if time.monotonic() > deadline:
                pytest.fail(f"gatebot run not healthy in time:\n{server.log.read_text()}")
            time.sleep(0.2)


def _stop(proc: subprocess.Popen[bytes]) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(timeout=10)


def _post(url: str, body: dict[str, Any] | None, token: str | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body or {}).encode()
    req = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")


def _at_once(calls: list[tuple[str, dict[str, Any], str]]) -> list[tuple[int, Any]]:
    """POST each (url, body, token) from its own thread, released together."""
    results: list[tuple[int, Any]] = [(0, None)] * len(calls)
    barrier = threading.Barrier(len(calls))

    def send(i: int) -> None:
        barrier.wait(timeout=10)
        results[i] = _post(*calls[i])

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


@pytest.fixture
def pg_schema(postgres: str) -> Iterator[str]:
    """A fresh, empty schema: the processes migrate it themselves."""
    yield from _schema(postgres)


def _schema(postgres: str) -> Iterator[str]:
    import psycopg

    plain = postgres.replace("+psycopg", "")
    schema = "gatebot_multi_" + secrets.token_hex(4)
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{postgres}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _redis_reason() -> str | None:
    try:
        import redis

        redis.Redis.from_url(REDIS_URL, socket_timeout=2, socket_connect_timeout=2).ping()
        return None
    except Exception as exc:
        return f"Redis not reachable at {REDIS_URL}: {exc}"


@pytest.fixture(scope="module", params=["advisory", "redis"])
def two_servers(
    request: pytest.FixtureRequest, postgres: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, list[Server]]]:
    """Two `gatebot run` processes on one empty PostgreSQL schema, started at the same time;
    shared by the tests of one backend, each in a conversation of its own."""
    tmp_path = tmp_path_factory.mktemp(f"pair-{request.param}")
    extra: dict[str, str] = {}
    if request.param == "redis":
        reason = _redis_reason()
        if reason:
            pytest.skip(reason)
        extra["REDIS_URL"] = REDIS_URL
    servers: list[Server] = []
    schema = _schema(postgres)
    pair_schema = next(schema)
    try:
        for name in ("a", "b"):
            port, data = _free_port(), tmp_path / name
            proc = _start(data, _env(data, port, pair_schema, **extra))
            servers.append(Server(proc, f"http://127.0.0.1:{port}", data, data / "server.log"))
        _wait_healthy(servers)
        yield pair_schema, servers
    finally:
        for server in servers:
            _stop(server.proc)
        schema.close()  # drops the schema


def _records(servers: list[Server], conversation_id: str) -> list[dict[str, Any]]:
    """The turn records both processes wrote (the JSONL recorder): one per turn that ran."""
    out = []
    for server in servers:
        path = server.data / "turns.jsonl"
        if path.exists():
            for line in path.read_text().splitlines():
                record = json.loads(line)
                if record["conversation_id"] == conversation_id:
                    out.append(record)
    return out


def _conversation(server: Server) -> tuple[str, str]:
    status, body = _post(f"{server.base}/api/conversations", {})
    assert status == 201, body
    return body["id"], body["token"]


def test_two_processes_start_on_an_empty_database(two_servers: tuple[str, list[Server]]) -> None:
    from bot.store import Store
    from bot.store.migrations import MIGRATIONS

    pair_schema, servers = two_servers
    store = Store(pair_schema)
    try:
        assert store.applied_migrations() == [name for name, _ in MIGRATIONS]
    finally:
        store.close()
    assert all(s.proc.poll() is None for s in servers)


def test_one_message_to_both_processes_makes_one_turn(
    two_servers: tuple[str, list[Server]],
) -> None:
    servers = two_servers[1]
    a, b = servers
    cid, token = _conversation(a)
    body = {"text": "Does Pipelines support Docker builds?", "client_message_id": "same-1"}
    path = f"/api/conversations/{cid}/messages"
    results = _at_once([(a.base + path, body, token), (b.base + path, body, token)])
    assert [status for status, _ in results] == [200, 200], results
    first, second = (r[1] for r in results)
    assert first["replies"] == second["replies"] and first["turn"] == second["turn"]
    assert sorted(bool(r.get("duplicate")) for r in (first, second)) == [False, True]
    # One turn ran, on one process: one record between them (its act stage, its tools, once).
    records = _records(servers, cid)
    assert len(records) == 1 and records[0]["seq"] == 1


def test_two_messages_of_one_conversation_at_once_get_seq_1_and_2(
    two_servers: tuple[str, list[Server]],
) -> None:
    servers = two_servers[1]
    a, b = servers
    cid, token = _conversation(a)
    path = f"/api/conversations/{cid}/messages"
    results = _at_once(
        [
            (a.base + path, {"text": "hello", "client_message_id": "m-a"}, token),
            (
                b.base + path,
                {"text": "Do you have a free trial?", "client_message_id": "m-b"},
                token,
            ),
        ]
    )
    assert [status for status, _ in results] == [200, 200], results
    assert sorted(r[1]["turn"]["seq"] for r in results) == [1, 2]
    assert sorted(r["seq"] for r in _records(servers, cid)) == [1, 2]


def test_a_delivery_whose_first_turn_died_still_runs(
    two_servers: tuple[str, list[Server]],
) -> None:
    """The first delivery was stored by a process that died before its turn (no lock is held,
    no turn stored): the client's retry, on the other process, runs the turn."""
    from bot.store import Store

    url, servers = two_servers
    cid, token = _conversation(servers[0])
    store = Store(url)
    try:
        store.receive_turn(cid, "web", f"{cid}:lost-1", "hello")
    finally:
        store.close()
    body = {"text": "hello", "client_message_id": "lost-1"}
    status, answer = _post(f"{servers[1].base}/api/conversations/{cid}/messages", body, token)
    assert status == 200, answer
    assert answer["turn"]["seq"] == 1 and answer["replies"]
    assert len(_records(servers, cid)) == 1


def test_workers_share_one_port_and_stop_together(pg_schema: str, tmp_path: Path) -> None:
    port = _free_port()
    proc = _start(tmp_path, _env(tmp_path, port, pg_schema), "--workers", "2")
    server = Server(proc, f"http://127.0.0.1:{port}", tmp_path, tmp_path / "server.log")
    try:
        _wait_healthy([server])
        cid, token = _conversation(server)
        path = f"{server.base}/api/conversations/{cid}/messages"
        results = _at_once(
            [(path, {"text": "hello", "client_message_id": f"w{i}"}, token) for i in range(4)]
        )
        assert [status for status, _ in results] == [200] * 4, results
        assert sorted(r[1]["turn"]["seq"] for r in results) == [1, 2, 3, 4]
        assert "2 workers" in server.log.read_text()
    finally:
        code = _stop(proc)
    assert code == 0, server.log.read_text()


def test_workers_over_one_on_sqlite_are_refused(tmp_path: Path) -> None:
    env = _env(tmp_path, _free_port(), f"sqlite:///{tmp_path / 'gatebot.db'}")
    done = subprocess.run(
        [*_exe(), "run", "--workers", "2"], cwd=ROOT, env=env, capture_output=True, timeout=120
    )
    assert done.returncode != 0
    assert "--workers 2 needs PostgreSQL" in done.stderr.decode()


def test_a_second_process_on_one_sqlite_file_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'gatebot.db'}"
    port = _free_port()
    first = _start(tmp_path / "a", _env(tmp_path / "a", port, url))
    server = Server(
        first, f"http://127.0.0.1:{port}", tmp_path / "a", tmp_path / "a" / "server.log"
    )
    try:
        _wait_healthy([server])
        env = _env(tmp_path / "b", _free_port(), url)
        done = subprocess.run([*_exe(), "run"], cwd=ROOT, env=env, capture_output=True, timeout=120)
        assert done.returncode != 0
        assert "another gatebot process is already serving" in done.stderr.decode()
        assert first.poll() is None  # the first one serves on, untouched
    finally:
        _stop(first)
