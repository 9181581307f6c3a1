"""The README's inspector screenshots, taken with headless Chromium against a real `gatebot run`.

    python scripts/inspector_screenshots.py [--out docs]

Seeds a few conversations through the store (tests/inspector_seed.py), runs the sample pack's
refund flow and an escalation through the REST API, logs in, and saves PNGs of the list, a
timeline, a flow run and the escalation queue.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.inspector import TOKEN, start_server  # noqa: E402
from bot.store import Store  # noqa: E402
from tests.inspector_seed import seed_conversation  # noqa: E402
from tests.test_widget_browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402


def post(url: str, body: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with urllib.request.urlopen(req, timeout=60) as resp:
        data: dict[str, Any] = json.loads(resp.read())
        return data


def say(base: str, conv: dict[str, Any], texts: list[str]) -> None:
    for n, text in enumerate(texts):
        post(
            f"{base}/api/conversations/{conv['id']}/messages",
            {"text": text, "client_message_id": f"s{n}"},
            conv["token"],
        )


def shoot(base: str, out: Path, long_id: str, run_url: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 760})
        page.goto(f"{base}/inspector/login")
        page.fill('input[name="staff"]', "Dana")
        page.fill('input[name="token"]', TOKEN)
        page.click('button[type="submit"]')
        page.wait_for_selector("tr.conv")
        page.screenshot(path=str(out / "inspector-list.png"))
        page.goto(f"{base}/inspector/conversations/{long_id}#turn-5")
        page.locator("#turn-5").scroll_into_view_if_needed()
        page.screenshot(path=str(out / "inspector-timeline.png"))
        page.goto(run_url)
        page.locator('.flowgraph a:has(g[data-step="lookup"])').click()
        page.screenshot(path=str(out / "inspector-flow-run.png"))
        page.goto(f"{base}/inspector/escalations")
        page.screenshot(path=str(out / "inspector-escalations.png"))
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        proc, base = start_server(data)
        try:
            store = Store(f"sqlite:///{data / 'gatebot.db'}")
            long = seed_conversation(store, 40)
            for words, channel in [("Hello from Slack", "slack"), ("Docker builds", "discord")]:
                seed_conversation(store, 3, channel, words)
            store.close()
            refund = post(f"{base}/api/conversations", {})
            say(base, refund, ["I want a refund for order 1042", "sam@example.com"])
            person = post(f"{base}/api/conversations", {})
            say(base, person, ["My alerts stopped working", "I want to talk to a person"])
            runs = Store(f"sqlite:///{data / 'gatebot.db'}").flow_runs(refund["id"])
            shoot(base, args.out, long.id, f"{base}/inspector/runs/{runs[0].id}")
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    for png in sorted(args.out.glob("inspector-*.png")):
        print(f"{png.relative_to(ROOT)}: {png.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
