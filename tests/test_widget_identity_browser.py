"""The widget's signed identity in a real browser (Chromium through Playwright) against a real
`gatebot run` with GATEBOT_IDENTITY_SECRET set: the tag's data-user-id and data-user-hash reach
the conversation as verified (the turn record's ``message.user``), and a bad signature is
refused by the server and the visitor chats on as anonymous.

Needs Chromium at /usr/bin/chromium (or $GATEBOT_CHROMIUM); skips without it, except under CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.identity import sign
from tests.test_widget_browser import (
    LAUNCHER,
    PANEL,
    START_TIMEOUT,
    _free_port,
    _healthy,
    ask,
    browser,
    context,
    expect,
    messages,
    page,
)

__all__ = ["browser", "context", "page"]  # the fixtures this module borrows

SECRET = "test-identity-secret-0123456789abcdef"
QUESTION = "Does Pipelines support Docker builds?"


@pytest.fixture(scope="module")
def signed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`gatebot run` with an identity secret and the JSONL recorder; its base URL and data dir."""
    exe = Path(sys.executable).parent / "gatebot"
    if not exe.exists():
        pytest.fail(f"the gatebot console script is missing at {exe}; pip install -e . first")
    data = tmp_path_factory.mktemp("gatebot-identity")
    port = _free_port()
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "GATEBOT_DATA_DIR": str(data), "GATEBOT_PORT": str(port),
           "GATEBOT_HOST": "127.0.0.1", "GATEBOT_RECORDERS": "jsonl",
           "GATEBOT_PACK": str(root / "knowledge" / "acme"),
           "GATEBOT_IDENTITY_SECRET": SECRET}  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    log_path = data / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([str(exe), "-v", "run"], cwd=root, env=env, stdout=log,
                                stderr=subprocess.STDOUT)  # fmt: skip
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not _healthy(f"{base}/healthz"):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"gatebot run did not become healthy:\n{log_path.read_text()}")
            time.sleep(0.2)
        yield base, data
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _signed_page(page: Any, base: str, user_id: str, user_hash: str) -> list[tuple[int, str]]:
    """Serve, at the bot's origin, a page whose widget tag carries this identity; open it. The
    conversation-creating answers seen (status, the claim sent) are returned as they arrive."""
    html = (
        "<!doctype html><html><body><h1>Signed-in page</h1>"
        f'<script src="{base}/widget.js" defer data-user-id="{user_id}" '
        f'data-user-hash="{user_hash}"></script></body></html>'
    )
    page.route(f"{base}/account.html", lambda route: route.fulfill(
        status=200, content_type="text/html; charset=utf-8", body=html))  # fmt: skip
    created: list[tuple[int, str]] = []

    def seen(response: Any) -> None:
        if response.request.method == "POST" and response.url == f"{base}/api/conversations":
            created.append((response.status, response.request.post_data or ""))

    page.on("response", seen)
    page.goto(f"{base}/account.html")
    page.locator(LAUNCHER).click()
    expect(page.locator(PANEL)).to_be_visible()
    ask(page, QUESTION)
    expect(messages(page, "agent", "Docker")).to_have_count(1)
    return created


def _users(data: Path, conversation_id: str) -> list[Any]:
    """``message.user`` of each recorded turn of the conversation (the JSONL record file)."""
    path = data / "turns.jsonl"
    deadline = time.monotonic() + 10
    while True:
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        turns = [json.loads(line) for line in lines]
        found = [t["message"]["user"] for t in turns if t.get("conversation_id") == conversation_id]
        if found or time.monotonic() > deadline:  # the record is written just after the reply
            return found
        time.sleep(0.1)


def _conversation_id(page: Any, base: str, user_id: str) -> str:
    stored = page.evaluate(f"() => localStorage.getItem('gatebot:conversation:{base}:{user_id}')")
    return str(json.loads(stored)["id"])


def test_a_signed_identity_reaches_the_conversation_as_verified(
    signed_server: tuple[str, Path], page: Any
) -> None:
    base, data = signed_server
    created = _signed_page(page, base, "42", sign(SECRET, "42"))
    assert [status for status, _ in created] == [201]
    assert json.loads(created[0][1])["user_id"] == "42"
    users = _users(data, _conversation_id(page, base, "42"))
    assert users and all(u == {"id": "web:42", "verified": True} for u in users)


@pytest.mark.parametrize(
    "user_hash",
    [
        "0" * 64,  # a made-up signature
        sign(SECRET, "43"),  # someone else's signature
        sign("another-secret", "42"),  # signed with the wrong secret
        "",
    ],
)
def test_a_bad_signature_is_refused_and_the_visitor_is_anonymous(
    signed_server: tuple[str, Path], page: Any, user_hash: str
) -> None:
    base, data = signed_server
    created = _signed_page(page, base, "42", user_hash)
    # The claim is refused; the widget opens an anonymous conversation instead, with no claim.
    assert [status for status, _ in created] == [401, 201]
    assert "user_id" in json.loads(created[0][1])
    assert "user_id" not in json.loads(created[1][1] or "{}")
    expect(messages(page, "error")).to_have_count(0)
    users = _users(data, _conversation_id(page, base, "42"))
    assert users and all(u == {"id": None, "verified": False} for u in users)
