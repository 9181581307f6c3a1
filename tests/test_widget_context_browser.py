"""The widget's site context in a real browser (Chromium): nothing about the page leaves it before
the visitor consents; after, the page (no query string) and the shaped greeting. The host page is
served from a loopback port of its own, an allowed origin; the bot is a real `gatebot run`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests import test_widget_browser as browser_tests
from tests.test_widget_browser import LAUNCHER, PANEL, expect, messages, serving_pages

# The browser tests' fixtures: a real `gatebot run`, Chromium, a fresh profile and page per test.
server, host_port = browser_tests.server, browser_tests.host_port
browser, context, page = browser_tests.browser, browser_tests.context, browser_tests.page

CONSENT = '[data-gatebot="consent"]'


@pytest.fixture(scope="module")
def site(server: str, host_port: int) -> Iterator[str]:
    """The host site on a loopback port its own (Chromium won't let a public page load from
    loopback): ``/monitor/alerts-SETTING`` is a product page with the tag's data-context=SETTING
    (``none``: no attribute)."""

    def page_for(path: str) -> bytes:
        setting = path.split("?")[0].rsplit("-", 1)[-1]
        attr = "" if setting == "none" else f' data-context="{setting}"'
        return (f"<!doctype html><title>Monitor alerts</title><h1>Alerts</h1>"
                f'<script src="{server}/widget.js"{attr} defer></script>').encode()  # fmt: skip

    with serving_pages(host_port, page_for) as url:
        yield url


def host(page: Any, server: str, site: str, setting: str) -> list[dict[str, Any]]:
    """Open the host site's product page with the widget tag set to ``setting``; returns the
    requests the page makes to the bot, as they are made: their path and JSON body."""
    sent: list[dict[str, Any]] = []

    def seen(request: Any) -> None:
        if request.url.startswith(server) and request.method == "POST":
            body = request.post_data
            sent.append({"path": request.url[len(server) :], "body": json.loads(body or "{}")})

    page.on("request", seen)
    page.goto(f"{site}/monitor/alerts-{setting}?visitor=jo%40example.com#top")
    return sent


def test_nothing_is_sent_before_consent_and_the_page_after(
    server: str, page: Any, site: str
) -> None:
    sent = host(page, server, site, "consent")
    page.locator(LAUNCHER).click()
    expect(page.locator(PANEL)).to_be_visible()
    expect(page.locator(CONSENT)).to_be_visible()
    assert [s["path"] for s in sent] == ["/api/conversations"]
    assert "alerts" not in json.dumps(sent)  # the page is not in any request yet
    page.locator('[data-gatebot="consent-yes"]').click()
    expect(messages(page, "agent", "Looking at Acme Monitor?")).to_have_count(1)
    expect(page.locator(CONSENT)).to_have_count(0)
    shared = [s for s in sent if s["path"].endswith("/context")]
    assert len(shared) == 1
    assert shared[0]["body"] == {
        "consent": "visitor",
        "url": f"{site}/monitor/alerts-consent",  # no query string, no fragment
        "title": "Monitor alerts",
        "referrer": "",
    }


def test_a_refusal_sends_no_page(server: str, page: Any, site: str) -> None:
    sent = host(page, server, site, "consent")
    page.locator(LAUNCHER).click()
    page.locator('[data-gatebot="consent-no"]').click()
    expect(page.locator(CONSENT)).to_have_count(0)
    expect(messages(page, "agent")).to_have_count(0)
    shared = [s["body"] for s in sent if s["path"].endswith("/context")]
    assert shared == [{"consent": "declined"}]


def test_granted_by_the_site_shares_at_once_and_absent_never(
    server: str, page: Any, site: str, context: Any
) -> None:
    sent = host(page, server, site, "granted")
    page.locator(LAUNCHER).click()
    expect(messages(page, "agent", "Looking at Acme Monitor?")).to_have_count(1)
    assert page.locator(CONSENT).count() == 0
    assert [s["body"]["consent"] for s in sent if s["path"].endswith("/context")] == ["site"]

    other = context.new_page()
    quiet = host(other, server, site, "none")
    other.locator(LAUNCHER).click()
    expect(other.locator(PANEL)).to_be_visible()
    other.locator('[data-gatebot="input"]').fill("hello")
    other.locator('[data-gatebot="send"]').click()
    expect(messages(other, "agent")).not_to_have_count(0)
    assert not any(s["path"].endswith("/context") for s in quiet)
    assert "alerts" not in json.dumps(quiet)
