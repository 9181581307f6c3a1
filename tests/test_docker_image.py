"""The image runs the real thing: built and started where a Docker daemon answers, it answers a
question with the trained heads and hybrid search. Skipped, with the reason, where none does."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
IMAGE = "gatebot:test"


def _daemon() -> str | None:
    """Why the image cannot be run here, or None when a daemon answers."""
    if shutil.which("docker") is None:
        return "no docker CLI on this machine"
    probe = subprocess.run(
        ["docker", "info", "--format", "{{.ServerVersion}}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["docker info failed"])[-1]
        return f"no Docker daemon answers: {last}"
    return None


pytestmark = pytest.mark.skipif(_daemon() is not None, reason=str(_daemon()))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _call(url: str, body: dict[str, Any] | None = None, token: str | None = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


@pytest.fixture(scope="module")
def container() -> Iterator[str]:
    build = subprocess.run(
        ["docker", "build", "-f", "docker/Dockerfile", "-t", IMAGE, "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    port, name = _free_port(), f"gatebot-test-{uuid.uuid4().hex[:8]}"
    subprocess.run(
        ["docker", "run", "-d", "--rm", "--name", name, "-p", f"127.0.0.1:{port}:8080", IMAGE],
        check=True,
        capture_output=True,
        timeout=120,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(180):  # bounded: three minutes for a cold start
            try:
                if _call(f"{base}/healthz")["status"] == "ok":
                    break
            except OSError:
                time.sleep(1)
        else:
            logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True)
            pytest.fail(f"the container never became healthy:\n{logs.stdout}{logs.stderr}")
        yield base
    finally:
        subprocess.run(["docker", "stop", name], capture_output=True, timeout=60)


def test_the_image_answers_with_trained_heads_and_hybrid_search(container: str) -> None:
    conv = _call(f"{container}/api/conversations", {})
    body = _call(
        f"{container}/api/conversations/{conv['id']}/messages",
        {"text": "how long are build caches kept in pipelines?", "client_message_id": "m1"},
        conv["token"],
    )
    turn = body["turn"]
    intent = next(r for r in turn["reads"] if r["head"] == "intent")
    assert "keyword-router" not in json.dumps(intent), intent  # the trained head read it
    assert turn["facts"] and turn["facts"][0]["mode"] == "hybrid", turn["facts"]
    assert "seven days" in body["replies"][0]["text"]
