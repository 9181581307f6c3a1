"""The web widget in a real browser (Chromium through Playwright) against a real `gatebot run`.

Needs Chromium at /usr/bin/chromium (or $GATEBOT_CHROMIUM). Without it these tests skip, except
under CI, which must install it and so fails instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("GATEBOT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# A bound, not a speed check: on a loaded two-core machine a cold start takes over 30 s.
START_TIMEOUT = 90.0
WAIT_MS = 15_000  # the longest any single browser wait may take

LAUNCHER = '[data-gatebot="launcher"]'
PANEL = '[data-gatebot="panel"]'
INPUT = '[data-gatebot="input"]'
SEND = '[data-gatebot="send"]'
MESSAGE = '[data-gatebot="message"]'
DOCKER_Q = "Does Pipelines support Docker builds?"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser tests: {reason}")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="module")
def host_port() -> int:
    """The port of host_page's site, chosen before the server starts: its origin is allowed."""
    return _free_port()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, host_port: int) -> Iterator[str]:
    """`gatebot run` on a free loopback port with a fresh data dir; its base URL."""
    yield from _run(tmp_path_factory.mktemp("gatebot-web"), host_port)


#: The staff API's token on the help-desk server.
ADMIN_TOKEN = "browser-test-admin-token"


@pytest.fixture(scope="module")
def desk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`gatebot run` routing requests for a person through pre-flight (the escalation menu),
    with the staff API on; its base URL and its data dir (the test reads escalations there)."""
    data = tmp_path_factory.mktemp("gatebot-desk")
    env = {"PREFLIGHT_ROUTING": "1", "GATEBOT_ADMIN_TOKEN": ADMIN_TOKEN}
    for base in _run(data, _free_port(), env):
        yield base, data


def _run(data: Path, host_port: int, extra: dict[str, str] | None = None) -> Iterator[str]:
    exe = Path(sys.executable).parent / "gatebot"
    if not exe.exists():
        pytest.fail(f"the gatebot console script is missing at {exe}; pip install -e . first")
    port = _free_port()
    env = {
        **os.environ,
        "GATEBOT_DATA_DIR": str(data),
        "GATEBOT_PORT": str(port),
        "GATEBOT_HOST": "127.0.0.1",
        "GATEBOT_RECORDERS": "memory",
        "GATEBOT_PACK": str(ROOT / "knowledge" / "acme"),
        "GATEBOT_ALLOWED_ORIGINS": f"http://127.0.0.1:{host_port}",
        **(extra or {}),
    }
    log_path = data / "server.log"
    base = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        # -v: the log says what started and when, should the start fail (quiet by default).
        proc = subprocess.Popen(
            [str(exe), "-v", "run"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not _healthy(f"{base}/healthz"):
            if proc.poll() is not None:
                pytest.fail(f"gatebot run exited with {proc.returncode}:\n{log_path.read_text()}")
            if time.monotonic() > deadline:
                pytest.fail(
                    f"gatebot run not healthy after {START_TIMEOUT:.0f}s:\n{log_path.read_text()}"
                )
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        _unavailable(
            f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set GATEBOT_CHROMIUM)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install -e '.[dev]')")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=WAIT_MS * 2
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    """A fresh browser profile per test: its own localStorage, so its own conversation."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.set_default_timeout(WAIT_MS)
    ctx.set_default_navigation_timeout(WAIT_MS)
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture
def page(context: Any) -> Iterator[Any]:
    """A page of its own; an uncaught script error on it fails the test."""
    new_page = context.new_page()
    errors: list[str] = []
    new_page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield new_page
    assert errors == [], f"uncaught errors in the page: {errors}"


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as pw_expect

    pw_expect.set_options(timeout=WAIT_MS)
    return pw_expect(locator)


def open_widget(page: Any) -> None:
    if not page.locator(PANEL).is_visible():
        page.locator(LAUNCHER).click()
    expect(page.locator(PANEL)).to_be_visible()


def ask(page: Any, text: str) -> None:
    page.locator(INPUT).fill(text)
    page.locator(SEND).click()


def messages(page: Any, role: str, text: str | None = None) -> Any:
    locator = page.locator(f'{MESSAGE}[data-role="{role}"]')
    return locator.filter(has_text=text) if text else locator


def ask_and_wait(page: Any, text: str) -> int:
    """Send, wait for the answer (however many replies the pack gives); the agent count after."""
    before = messages(page, "agent").count()
    ask(page, text)
    expect(messages(page, "agent")).not_to_have_count(before)
    expect(page.locator('[data-gatebot="typing"]')).to_be_hidden()
    return int(messages(page, "agent").count())


def test_asks_and_gets_a_cited_answer(server: str, page: Any) -> None:
    page.goto(f"{server}/")
    expect(page.locator(PANEL)).to_be_hidden()
    page.locator(LAUNCHER).click()
    expect(page.locator(PANEL)).to_be_visible()
    ask(page, DOCKER_Q)
    expect(messages(page, "customer", DOCKER_Q)).to_have_count(1)
    answer = messages(page, "agent", "Docker")
    expect(answer).to_have_count(1)
    expect(answer).to_contain_text("Source")
    expect(page.locator(INPUT)).to_have_value("")


def test_enter_sends_and_cards_render(server: str, page: Any) -> None:
    """Cards come from the pack's playbook, which changes; the reply here is fixed by the test."""
    cards = [
        {"type": "text", "text": "Here is how to reach us.", "citations": []},
        {"type": "card", "card": "contact", "contact": "sales@acme.example", "outcome": "demo"},
        {"type": "card", "card": "booking", "url": "https://book.example/acme"},
        {"type": "card", "card": "booking", "url": "javascript:alert(1)"},
    ]
    page.route(
        "**/api/conversations/*/messages",
        lambda route: route.fulfill(
            status=200,
            content_type="application/json",
            body=json.dumps({"replies": cards, "turn": {}, "duplicate": False}),
        ),
    )
    page.goto(f"{server}/")
    open_widget(page)
    page.locator(INPUT).fill("I'd like a demo")
    page.locator(INPUT).press("Enter")
    expect(messages(page, "customer", "I'd like a demo")).to_have_count(1)
    expect(messages(page, "agent")).to_have_count(4)
    expect(page.locator(INPUT)).to_have_value("")
    expect(page.locator('[data-gatebot="typing"]')).to_be_hidden()
    contact = page.locator(f'{MESSAGE}[data-card="contact"] a')
    expect(contact).to_have_attribute("href", "mailto:sales@acme.example")
    booking = page.locator(f'{MESSAGE}[data-card="booking"]')
    expect(booking.nth(0).locator("a")).to_have_attribute("href", "https://book.example/acme")
    expect(booking.nth(1).locator("a")).to_have_count(0)  # not a link: not http(s)


def test_reload_continues_the_conversation(server: str, page: Any) -> None:
    page.goto(f"{server}/")
    open_widget(page)
    ask(page, DOCKER_Q)
    expect(messages(page, "agent", "Docker")).to_have_count(1)
    stored = page.evaluate("() => JSON.stringify(localStorage)")

    page.reload()
    open_widget(page)
    expect(messages(page, "customer", DOCKER_Q)).to_have_count(1)
    expect(messages(page, "agent", "Docker")).to_have_count(1)
    assert page.evaluate("() => JSON.stringify(localStorage)") == stored

    ask_and_wait(page, "What's the weather in Paris?")  # and it carries on in the same one
    assert page.evaluate("() => JSON.stringify(localStorage)") == stored


def test_text_is_never_html(server: str, page: Any) -> None:
    page.goto(f"{server}/")
    open_widget(page)
    evil = '<img src=x onerror="window.__pwned=1"><b>bold</b>'
    ask_and_wait(page, evil)
    expect(messages(page, "customer", evil)).to_have_count(1)
    assert page.locator(f"{MESSAGE} img, {MESSAGE} b").count() == 0
    assert page.evaluate("() => window.__pwned") is None


def test_server_errors_are_shown(server: str, page: Any) -> None:
    page.goto(f"{server}/")
    open_widget(page)
    assert page.locator(INPUT).get_attribute("maxlength") == "4000"
    sent = page.evaluate("() => window.gatebot.send('x'.repeat(4001))")
    assert sent is False
    expect(messages(page, "error", "the limit is 4000")).to_have_count(1)
    expect(messages(page, "agent")).to_have_count(0)


def test_live_events_reach_another_tab_once(server: str, context: Any) -> None:
    first, second = context.new_page(), context.new_page()
    first.goto(f"{server}/")
    open_widget(first)
    ask_and_wait(first, "hello")

    second.goto(f"{server}/")  # same profile, so the same conversation
    open_widget(second)
    expect(messages(second, "customer", "hello")).to_have_count(1)
    # Both tabs listen now; wait until the second one's websocket is up, then ask from it.
    expect(second.locator(f"{PANEL} .dot:not([data-offline])")).to_have_count(1)
    expect(first.locator(f"{PANEL} .dot:not([data-offline])")).to_have_count(1)
    first_before = messages(first, "agent").count()
    second_before = messages(second, "agent").count()
    second_after = ask_and_wait(second, DOCKER_Q)
    expect(messages(second, "agent", "Docker")).to_have_count(1)
    expect(messages(first, "customer", DOCKER_Q)).to_have_count(1)
    expect(messages(first, "agent", "Docker")).to_have_count(1)
    second.wait_for_timeout(500)  # late websocket echoes must not duplicate what the POST showed
    expect(messages(second, "customer")).to_have_count(2)
    expect(messages(second, "agent")).to_have_count(second_after)
    expect(messages(first, "agent")).to_have_count(first_before + second_after - second_before)


def test_network_failure_retries_once_with_the_same_id(server: str, page: Any) -> None:
    posts: list[str] = []
    failures = {"left": 1}

    def flaky(route: Any) -> None:
        posts.append(route.request.post_data_json["client_message_id"])
        if failures["left"]:
            failures["left"] -= 1
            route.abort("connectionreset")
        else:
            route.continue_()

    page.route("**/api/conversations/*/messages", flaky)
    page.goto(f"{server}/")
    open_widget(page)
    answers = ask_and_wait(page, DOCKER_Q)
    expect(messages(page, "agent", "Docker")).to_have_count(1)
    assert len(posts) == 2 and posts[0] == posts[1]

    failures["left"] = 2  # both tries fail: say so, keep the text, show no answer
    ask(page, "What's the weather in Paris?")
    expect(messages(page, "error", "may not have been delivered")).to_have_count(1)
    expect(page.locator(INPUT)).to_have_value("What's the weather in Paris?")
    expect(messages(page, "agent")).to_have_count(answers)
    assert len(posts) == 4 and posts[2] == posts[3] != posts[0]


def test_a_busy_server_is_asked_again_with_backoff_and_the_customer_told(
    server: str, page: Any
) -> None:
    posts: list[str] = []
    busy = {"left": 2}

    def shedding(route: Any) -> None:
        posts.append(route.request.post_data_json["client_message_id"])
        if busy["left"]:
            busy["left"] -= 1
            route.fulfill(
                status=503,
                headers={"Retry-After": "1", "Access-Control-Expose-Headers": "Retry-After"},
                json={"error": {"code": "overloaded", "message": "busy"}},
            )
        else:
            route.continue_()

    page.route("**/api/conversations/*/messages", shedding)
    page.goto(f"{server}/")
    open_widget(page)
    ask(page, DOCKER_Q)
    expect(page.locator(f"{PANEL} [data-gatebot=progress]")).to_contain_text("busy right now")
    expect(messages(page, "agent", "Docker")).to_have_count(1)
    assert len(posts) == 3 and len(set(posts)) == 1  # one message id: one turn

    busy["left"] = 10  # busy past every retry: say so and keep the text
    ask(page, "Is there a free trial?")
    expect(messages(page, "error", "very busy")).to_have_count(1, timeout=60_000)
    expect(page.locator(INPUT)).to_have_value("Is there a free trial?")


def test_staff_messages_arrive_over_the_websocket(server: str, page: Any) -> None:
    sockets: list[Any] = []

    def relay(ws: Any) -> None:
        ws.connect_to_server()  # a pass-through that lets the test speak as the server too
        sockets.append(ws)

    page.route_web_socket("**/events*", relay)
    page.goto(f"{server}/")
    open_widget(page)
    answers = ask_and_wait(page, "I want to talk to a person")
    expect(page.locator(f"{PANEL} .dot:not([data-offline])")).to_have_count(1)
    assert len(sockets) == 1
    staff = {"type": "replies", "replies": [{"type": "text", "text": "Hi, Sam from support here."}]}
    sockets[0].send(json.dumps(staff))
    expect(messages(page, "staff", "Sam from support")).to_have_count(1)

    page.evaluate("() => window.gatebot.close()")
    sockets[0].send(json.dumps({**staff, "replies": [{"type": "text", "text": "Still there?"}]}))
    expect(page.locator(f"{LAUNCHER}[data-unread]")).to_have_count(1)
    page.locator(LAUNCHER).click()
    expect(messages(page, "staff", "Still there?")).to_be_visible()
    expect(page.locator(f"{LAUNCHER}[data-unread]")).to_have_count(0)
    expect(messages(page, "agent")).to_have_count(answers)


def test_tool_progress_shows_a_fixed_phrase_until_the_reply(server: str, page: Any) -> None:
    sockets: list[Any] = []

    def relay(ws: Any) -> None:
        ws.connect_to_server()
        sockets.append(ws)

    page.route_web_socket("**/events*", relay)
    page.goto(f"{server}/")
    open_widget(page)
    answers = ask_and_wait(page, DOCKER_Q)  # a real turn: its progress is gone with its reply
    progress = page.locator('[data-gatebot="progress"]')
    expect(progress).to_be_hidden()
    expect(page.locator(f"{PANEL} .dot:not([data-offline])")).to_have_count(1)
    event = {
        "type": "tool",
        "tool": "knowledge.search",
        "event": "requested",
        "detail": {"arguments": ["k", "query"], "note": "secret words"},
    }
    sockets[0].send(json.dumps(event))
    expect(progress).to_have_text("Searching the help center…")
    sockets[0].send(json.dumps({**event, "tool": "knowledge.read", "event": "started"}))
    expect(progress).to_have_text("Reading a source…")
    sockets[0].send(json.dumps({**event, "tool": "orders.refund"}))
    expect(progress).to_have_text("Working on it…")
    preflight = {"type": "progress", "stage": "preflight", "text": "Je regarde cela."}
    sockets[0].send(json.dumps(preflight))
    expect(progress).to_have_text("Je regarde cela.")
    expect(page.locator(PANEL)).not_to_contain_text("secret words")
    reply = {
        "type": "reply",
        "role": "agent",
        "seq": 99,
        "reply": {"type": "text", "text": "Here is what I found.", "citations": []},
    }
    sockets[0].send(json.dumps(reply))
    expect(messages(page, "agent", "Here is what I found.")).to_have_count(1)
    expect(progress).to_be_hidden()
    expect(messages(page, "agent")).to_have_count(answers + 1)


HOSTILE = """<!doctype html><html><head><style>
body * { display: none !important; }
* { font: 40px/9 serif !important; color: red !important; border: 4px solid red !important; }
button, textarea, div { visibility: hidden !important; opacity: 0 !important; }
</style></head><body><p>host page</p>
<script src="%s/widget.js" defer></script></body></html>"""


@pytest.fixture
def host_page(server: str, host_port: int) -> Iterator[str]:
    """Another site (another origin: a second loopback port) whose CSS is hostile, embedding the
    widget with one tag. Loopback, because Chromium won't let a public http page load from it."""
    body = (HOSTILE % server).encode()
    with serving_pages(host_port, lambda _path: body) as url:
        yield url + "/"


@contextlib.contextmanager
def serving_pages(port: int, page_for: Callable[[str], bytes]) -> Iterator[str]:
    """A host site on a loopback port (another origin than the bot's): each GET is answered with
    the HTML ``page_for(path)`` returns. Yields the site's base URL; shut down on exit."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page_for(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_host_page_css_cannot_break_it_and_cross_origin_works(
    server: str, host_page: str, page: Any
) -> None:
    page.goto(host_page)
    expect(page.locator(LAUNCHER)).to_be_visible()
    page.locator(LAUNCHER).click()
    expect(page.locator(PANEL)).to_be_visible()
    font_size = page.locator(INPUT).evaluate("el => getComputedStyle(el).fontSize")
    assert font_size == "14px"
    ask(page, DOCKER_Q)
    expect(messages(page, "agent", "Docker")).to_have_count(1)
    keys = page.evaluate("() => Object.keys(localStorage)")
    assert keys == [f"gatebot:conversation:{server}"]


# -- the help-desk loop ------------------------------------------------------------------------


def _escalation(data: Path, conversation_id: str) -> tuple[int, str, str]:
    """(id, help desk, status) of the conversation's escalation, read from the server's store."""
    import sqlite3

    with sqlite3.connect(data / "gatebot.db") as db:
        row = db.execute(
            "SELECT id, helpdesk, status FROM escalations WHERE conversation_id = ?",
            (conversation_id,),
        ).fetchone()
    assert row is not None, "no escalation"
    return int(row[0]), str(row[1]), str(row[2])


def _staff_says(base: str, escalation_id: int, text: str) -> dict[str, Any]:
    """Sam answers from the staff API (as staff without Slack or Discord would)."""
    body = json.dumps({"staff": "U_SAM", "name": "Sam Lee", "text": text}).encode()
    req = urllib.request.Request(
        f"{base}/api/staff/escalations/{escalation_id}/reply",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        answer: dict[str, Any] = json.loads(resp.read())
    return answer


def _conversation_id(page: Any) -> str:
    stored = page.evaluate("""() => Object.keys(localStorage)
        .filter(k => k.startsWith("gatebot:conversation:")).map(k => localStorage[k])[0]""")
    return str(json.loads(stored)["id"])


def test_the_escalation_menu_the_author_and_a_reconnect(
    desk_server: tuple[str, Path], page: Any
) -> None:
    base, data = desk_server
    mode = {"hold": False}
    sockets: list[Any] = []

    def events(ws: Any) -> None:
        sockets.append(ws)
        if not mode["hold"]:
            ws.connect_to_server()  # else: the page's socket reaches no server (a dead link)

    page.route_web_socket("**/events*", events)
    page.goto(f"{base}/")
    open_widget(page)

    # Asking for a person: the team is told, the customer hears when they answer, and the
    # escalation menu is real buttons.
    ask(page, "I need to talk to someone now")
    expect(messages(page, "agent", "Monday to Friday")).to_have_count(1)
    options = page.locator('[data-gatebot="escalation-option"]')
    expect(options).to_have_count(2)
    cid = _conversation_id(page)
    esc_id, desk, _ = _escalation(data, cid)
    assert desk == "support"

    # Choosing sales says it, moves the escalation there, and the agent only says it waits.
    sales = page.locator('[data-gatebot="escalation-option"][data-helpdesk="sales"]')
    sales.click()
    expect(messages(page, "customer", "Account executives")).to_have_count(1)
    expect(messages(page, "agent", "Our team has been told")).to_have_count(1)
    expect(options.nth(0)).to_be_disabled()
    assert _escalation(data, cid)[1] == "sales"

    # Sam answers from the staff API: live, with his name.
    expect(page.locator(f"{PANEL} .dot:not([data-offline])")).to_have_count(1)
    _staff_says(base, esc_id, "Hi, Sam from sales here.")
    staff = messages(page, "staff", "Sam from sales")
    expect(staff).to_have_count(1)
    expect(staff.locator('[data-gatebot="author"]')).to_have_text("Sam Lee")

    # The socket drops, and Sam writes while no socket reaches the server: the widget's
    # reconnects reach nothing (hold), so only its refetch after a reconnect can show it.
    mode["hold"] = True
    sockets[-1].close()
    expect(page.locator(f"{PANEL} .dot[data-offline]")).to_have_count(1)
    answer = _staff_says(base, esc_id, "Are you still there?")
    assert answer["escalation"]["status"] == "claimed"
    late = messages(page, "staff", "still there")
    expect(late).to_have_count(1, timeout=WAIT_MS * 2)
    expect(late.locator('[data-gatebot="author"]')).to_have_text("Sam Lee")
    mode["hold"] = False
    held = len(sockets)
    sockets[-1].close()  # the dead link ends; the next try reaches the server, and refetches
    expect(page.locator(f"{PANEL} .dot:not([data-offline])")).to_have_count(1, timeout=WAIT_MS * 2)
    assert len(sockets) > held
    # A late live copy of the same message (same id) shows nothing twice.
    message_id = int(late.get_attribute("data-message-id") or 0)
    copy = {
        "type": "text",
        "text": "Are you still there?",
        "role": "staff",
        "author": "U_SAM",
        "author_name": "Sam Lee",
        "message_id": message_id,
    }
    sockets[-1].send(json.dumps({"type": "replies", "replies": [copy]}))
    page.wait_for_timeout(300)
    expect(late).to_have_count(1)
    expect(messages(page, "staff")).to_have_count(2)
    expect(messages(page, "customer")).to_have_count(2)

    # Reloaded: who wrote is still shown, from GET /api/conversations/{id}.
    page.reload()
    open_widget(page)
    authors = page.locator(f'{MESSAGE}[data-role="staff"] [data-gatebot="author"]')
    expect(authors).to_have_text(["Sam Lee", "Sam Lee"])
