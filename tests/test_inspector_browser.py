"""The staff inspector in a real browser (Chromium through Playwright) against a real
`gatebot run`: log in, filter, open a 200-turn conversation, open a flow run and fork it with an
edited output, and take over an escalation and answer from the page while the customer's widget,
in another browser profile, receives the answer.

The 200-turn conversation is written through the store into the server's own SQLite file (a few
hundred milliseconds), not by 200 real turns. Needs Chromium, as tests/test_widget_browser.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.store import Store
from tests.inspector_seed import seed_conversation
from tests.test_widget_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    START_TIMEOUT,
    WAIT_MS,
    _free_port,
    _healthy,
    _unavailable,
    ask_and_wait,
    expect,
    messages,
    open_widget,
)

ROOT = Path(__file__).resolve().parent.parent
ADMIN = "browser-inspector-token"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`gatebot run` with an admin token; its base URL and its data directory."""
    exe = Path(sys.executable).parent / "gatebot"
    data = tmp_path_factory.mktemp("gatebot-inspector")
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "GATEBOT_DATA_DIR": str(data),
        "GATEBOT_PORT": str(port),
        "GATEBOT_HOST": "127.0.0.1",
        "GATEBOT_RECORDERS": "memory",
        "GATEBOT_PACK": str(ROOT / "knowledge" / "acme"),
        "GATEBOT_ADMIN_TOKEN": ADMIN,
        "ACME_ORDERS_URL": f"{base}/demo-api",
    }
    env.pop("ACME_ORDERS_TOKEN", None)
    env.pop("DATABASE_URL", None)
    log_path = data / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [str(exe), "-v", "run"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not _healthy(f"{base}/healthz"):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"gatebot run did not come up:\n{log_path.read_text()}")
            time.sleep(0.2)
        yield base, data
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def store(served: tuple[str, Path]) -> Iterator[Store]:
    """The server's own database, for seeding."""
    opened = Store(f"sqlite:///{served[1] / 'gatebot.db'}")
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        _unavailable(f"Chromium not found at {CHROMIUM}")
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


def _page_error(msg: Any) -> bool:
    """A console error of the page's own; Chromium's own request for /favicon.ico (none is
    served) logs a 404 whenever it finishes before the page closes, which is timing, not a bug."""
    where = str((msg.location or {}).get("url", ""))
    return bool(msg.type == "error" and not where.endswith("/favicon.ico"))


def new_page(browser: Any) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(WAIT_MS)
    ctx.set_default_navigation_timeout(WAIT_MS)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: _page_error(msg) and errors.append(msg.text))
    return ctx, page, errors


@pytest.fixture
def staff(browser: Any, served: tuple[str, Path]) -> Iterator[Any]:
    """A staff member's page, logged in through the form."""
    ctx, page, errors = new_page(browser)
    try:
        page.goto(f"{served[0]}/inspector")
        expect(page.locator("h1")).to_have_text("Staff log in")  # redirected to log in
        page.fill('input[name="staff"]', "Dana")
        page.fill('input[name="token"]', ADMIN)
        page.click('button[type="submit"]')
        expect(page.locator("h1")).to_have_text("Conversations")
        assert ADMIN not in page.url
        yield page
        assert errors == [], f"errors in the page: {errors}"
    finally:
        ctx.close()


def post_json(url: str, body: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with urllib.request.urlopen(req, timeout=60) as resp:
        data: dict[str, Any] = json.loads(resp.read())
        return data


def test_a_wrong_token_stays_on_the_login_page(browser: Any, served: tuple[str, Path]) -> None:
    ctx, page, _ = new_page(browser)
    try:
        page.goto(f"{served[0]}/inspector/login")
        page.fill('input[name="staff"]', "Dana")
        page.fill('input[name="token"]', "wrong")
        page.click('button[type="submit"]')
        expect(page.locator(".error")).to_have_text("Wrong token.")
        assert ctx.cookies() == []
    finally:
        ctx.close()


def test_filter_and_open_a_200_turn_conversation(
    staff: Any, store: Store, served: tuple[str, Path]
) -> None:
    long = seed_conversation(store, 200, "web", "How much does it cost")
    slack = seed_conversation(store, 3, "slack", "Hello from Slack")
    staff.goto(f"{served[0]}/inspector")
    staff.select_option('select[name="channel"]', "slack")
    staff.click('form.filters button[type="submit"]')
    expect(staff.locator("tr.conv")).to_have_count(1)
    expect(staff.locator(f'tr.conv[data-id="{slack.id}"]')).to_be_visible()
    staff.select_option('select[name="channel"]', "")
    staff.fill('input[name="q"]', "does it cost")
    staff.check('input[name="refused"]')
    staff.click('form.filters button[type="submit"]')
    expect(staff.locator("tr.conv")).to_have_count(1)
    staff.locator(f'tr.conv[data-id="{long.id}"] a').click()
    expect(staff.locator("article.turn")).to_have_count(200)
    turn = staff.locator("#turn-7")
    expect(turn).to_contain_text("reply refused")
    expect(turn).to_contain_text("cites no fact")
    turn.locator('a[href="/inspector/passages/faq-slack-alerts"]').click()
    expect(staff.locator("h1")).to_have_text("Passage faq-slack-alerts")
    expect(staff.locator("article.passage")).to_contain_text("Slack")


def test_open_a_flow_run_and_fork_it_with_an_edited_output(
    staff: Any, served: tuple[str, Path]
) -> None:
    base = served[0]
    conv = post_json(f"{base}/api/conversations", {})
    for n, text in enumerate(["I want a refund for order 1042", "sam@example.com"]):
        post_json(
            f"{base}/api/conversations/{conv['id']}/messages",
            {"text": text, "client_message_id": f"r{n}"},
            conv["token"],
        )
    staff.goto(f"{base}/inspector/conversations/{conv['id']}")
    staff.locator('a[href^="/inspector/runs/"]').first.click()
    expect(staff.locator("h1")).to_contain_text("Flow run")
    expect(staff.locator('.flowgraph g.node.taken[data-step="lookup"]')).to_have_count(1)
    staff.locator('.flowgraph a:has(g[data-step="lookup"])').click()
    panel = staff.locator("details.checkpoint[open]")
    expect(panel).to_have_count(1)
    expect(panel.locator("summary")).to_contain_text("lookup")
    output = json.loads(panel.locator('textarea[name="output"]').input_value())
    output["note"] = "edited in the inspector"
    panel.locator('textarea[name="output"]').fill(json.dumps(output))
    parent_url = staff.url.split("#")[0]
    panel.locator('button[data-action="fork"]').click()
    staff.wait_for_url(lambda url: url != parent_url and "/inspector/runs/" in url)
    expect(staff.locator("body")).to_contain_text("forked from")
    expect(staff.locator("body")).to_contain_text("side effects dry")
    edited = staff.locator("details.checkpoint", has=staff.locator(".badge", has_text="edited"))
    expect(edited).to_have_count(1)
    expect(edited.locator("pre").nth(1)).to_contain_text("edited in the inspector")


def test_take_over_and_answer_from_the_page_reaches_the_widget(
    staff: Any, browser: Any, served: tuple[str, Path]
) -> None:
    base = served[0]
    ctx, customer, errors = new_page(browser)
    try:
        customer.goto(f"{base}/")
        open_widget(customer)
        ask_and_wait(customer, "I want to talk to a person")
        expect(customer.locator('[data-gatebot="panel"] .dot:not([data-offline])')).to_have_count(1)
        staff.goto(f"{base}/inspector/escalations")
        row = staff.locator("tr.escalation").first
        row.locator('button[data-verb="take_over"]').click()
        expect(row.locator("td.status")).to_have_text("claimed")
        row.locator('textarea[name="text"]').fill("Hi, this is Dana from the team.")
        row.locator('button[data-verb="reply"]').click()
        expect(row.locator(".result")).to_contain_text("sent")
        expect(messages(customer, "staff", "Hi, this is Dana from the team.")).to_have_count(1)
        row.locator('select[name="outcome"]').select_option("demo")
        row.locator('button[data-verb="resolve"]').click()
        expect(row.locator("td.status")).to_have_text("resolved")
        staff.locator('a[href^="/inspector/conversations/"]').first.click()
        expect(staff.locator('.msg[data-role="staff"]')).to_contain_text("Dana")
        expect(staff.locator("ul.outcomes")).to_contain_text("demo from escalation")
        form = staff.locator("form.label-turn").first
        form.locator('select[name="intent"]').select_option("refund")
        form.locator("button[data-label]").click()
        expect(form.locator(".result")).to_contain_text("labelled refund (corrected from")
        assert errors == []
    finally:
        ctx.close()


def test_start_a_replay_from_the_page_and_read_its_report(
    staff: Any, served: tuple[str, Path], tmp_path: Path
) -> None:
    base = served[0]
    conv = post_json(f"{base}/api/conversations", {})
    post_json(
        f"{base}/api/conversations/{conv['id']}/messages",
        {"text": "Is there a free trial?", "client_message_id": "p0"},
        conv["token"],
    )
    pack = tmp_path / "raised"
    shutil.copytree(ROOT / "knowledge" / "acme", pack)
    with (pack / "gates.yaml").open("a", encoding="utf-8") as f:
        f.write("sentiment: 0.99\n")
    staff.goto(f"{base}/inspector/replay")
    staff.fill('input[name="pack"]', str(pack))
    staff.fill('input[name="conversations"]', conv["id"])
    staff.click("button[data-replay-start]")
    # The page follows the replay and reloads with the report (the sandbox takes seconds).
    expect(staff.locator("p.totals")).to_contain_text("1 of 1 turn(s) changed", timeout=180_000)
    expect(staff.locator("section.replayed-turn")).to_contain_text("Is there a free trial?")
    expect(staff.locator('a[href="/inspector/api/replay/report.json"]')).to_be_visible()
