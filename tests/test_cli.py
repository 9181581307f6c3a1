"""The command line as a user runs it: the installed `gatebot` script in a subprocess."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ACME, ROOT

GATEBOT = str(Path(sys.executable).parent / "gatebot")


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GATEBOT_", "DATABASE_URL", "REDIS_URL"))
    }
    env.update({"GATEBOT_DATA_DIR": str(tmp_path / "var"), "GATEBOT_PACK": str(ACME), **extra})
    return env


def run(
    args: list[str], tmp_path: Path, stdin: str = "", **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GATEBOT, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env_for(tmp_path, **extra),
        cwd=ROOT,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_plugins_lists_plugins_and_their_hooks(tmp_path: Path) -> None:
    result = run(["plugins"], tmp_path)
    assert result.returncode == 0
    assert "web  (gatebot==" in result.stdout and "    register_channels" in result.stdout
    data = json.loads(run(["plugins", "--json"], tmp_path).stdout)
    assert {p["name"] for p in data["plugins"]} >= {"web", "offline"}
    assert data["errors"] == []


def test_doctor_reports_each_part(tmp_path: Path) -> None:
    result = run(["doctor"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    for part in ("pack", "plugins", "model provider", "channels", "database", "embedding model"):
        assert part in result.stdout
    assert "GATEBOT_MODEL=offline" in result.stdout and "sqlite" in result.stdout
    assert "slack (not configured)" in result.stdout and "web" in result.stdout
    # Doctor only looks: it creates no database and applies no migration.
    assert "no database yet" in result.stdout
    assert not (tmp_path / "var" / "gatebot.db").exists()


def test_doctor_names_pending_migrations_and_applies_none(tmp_path: Path) -> None:
    import sqlalchemy as sa

    from bot.cli.doctor import _database
    from bot.config import Settings
    from bot.store import Store
    from bot.store.migrations import MIGRATIONS

    settings = Settings(data_dir=tmp_path)
    store = Store(settings.database_url)
    store.migrate()
    last = MIGRATIONS[-1][0]
    with store.engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM schema_migrations WHERE name = :n"), {"n": last})
    part, status, detail = _database(settings)
    assert (part, status) == ("database", "warn")
    assert f"1 pending ({last})" in detail and "gatebot run applies them" in detail
    assert last not in store.applied_migrations()
    store.close()


def test_doctor_fails_on_an_unreachable_database(tmp_path: Path) -> None:
    result = run(["doctor"], tmp_path, DATABASE_URL="postgresql://nobody@127.0.0.1:1/none")
    assert result.returncode == 1
    assert "database" in result.stdout and "FAIL" in result.stdout
    assert "Traceback" not in result.stderr


def test_bad_settings_are_errors_not_tracebacks(tmp_path: Path) -> None:
    result = run(["chat"], tmp_path, GATEBOT_MODEL="nonesuch")
    assert result.returncode == 2 and "names no registered provider" in result.stderr
    result = run(["chat"], tmp_path, GATEBOT_PACK=str(tmp_path / "missing"))
    assert result.returncode == 2 and "no such pack folder" in result.stderr
    assert "Traceback" not in result.stderr


def test_chat_holds_a_conversation_and_shows_decisions(tmp_path: Path) -> None:
    result = run(
        ["chat"],
        tmp_path,
        stdin="hello\nwhat's the weather in Paris\n"
        "Does Pipelines support Docker builds?\nI want to talk to a person\n/quit\n",
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "bot> Hi! I'm the Acme Cloud assistant" in out
    assert "scope   out (out_of_scope:weather)" in out and "move    decline" in out
    assert "[sources: faq-docker]" in out
    assert "move    handoff: forced" in out
    # Quiet by default: no info or debug lines, no model-loading bars between the turns.
    for noise in (" INFO ", " DEBUG ", "Loading weights", "bm25s"):
        assert noise not in result.stderr, result.stderr


def test_chat_serves_the_demo_api_so_the_seat_flow_works(tmp_path: Path) -> None:
    result = run(
        ["chat", "--quiet"],
        tmp_path,
        stdin="I'd like to add seats please\nsam@example.com\nsub_acme1\nadd 3 seats\ndone\n",
    )
    assert result.returncode == 0, result.stderr
    assert "Added 3 seats (now 8)" in result.stdout
    assert "All set: your subscription changes are in." in result.stdout
    assert "/demo-api" in result.stderr and "http://127.0.0.1:" in result.stderr


def test_verbosity_flags_set_the_log_level() -> None:
    from bot.cli.output import level_for

    assert [level_for(n) for n in (0, 1, 2, 3)] == [
        logging.WARNING,
        logging.INFO,
        logging.DEBUG,
        logging.DEBUG,
    ]


def test_run_serves_the_api_until_stopped(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [GATEBOT, "run", "--port", str(port)],
        env=env_for(tmp_path),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    assert json.loads(r.read())["status"] == "ok"
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail(
                        "gatebot run did not come up: "
                        + (proc.stderr.read() if proc.stderr else "")
                    )
                time.sleep(0.2)
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/conversations", method="POST")
        with urllib.request.urlopen(req, timeout=5) as r:
            assert r.status == 201
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            # A bound, not a speed check: the stop waits for start-up work still running in a
            # thread (the scope check's warm-up), over 20 s on a loaded two-core machine.
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    assert (tmp_path / "var" / "gatebot.db").exists()


def test_progress_bars_show_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from bot.cli.output import progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    pipe, terminal = io.StringIO(), Terminal()
    monkeypatch.setattr(sys, "stderr", pipe)
    assert list(progress(range(3), "work")) == [0, 1, 2]
    assert pipe.getvalue() == ""
    monkeypatch.setattr(sys, "stderr", terminal)
    assert list(progress(range(3), "work")) == [0, 1, 2]
    assert "work:" in terminal.getvalue() and "0/3" in terminal.getvalue()


def test_lists_print_as_aligned_tables() -> None:
    from bot.cli.output import table

    assert table(["name", "n"], [["refund", 7], ["demo", 12]]).splitlines() == [
        "name    n",
        "------  --",
        "refund  7",
        "demo    12",
    ]
