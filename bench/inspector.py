"""The staff inspector rendering a long conversation: server time for the page, and Chromium's.

    python bench/inspector.py [--turns 200] [--repeat 5] [--json] [--no-browser]

Starts `gatebot run` on the sample pack with a fresh data directory, writes a conversation of
``--turns`` turns through the store (tests/inspector_seed.py: varied records, not real turns),
logs in, then reports the median of ``--repeat`` runs of:

- ``server_ms``: GET /inspector/conversations/{id} over loopback, to the last byte (the store
  reads, the records drawn as HTML, the response);
- ``dom_ms`` / ``load_ms``: headless Chromium (/usr/bin/chromium) from navigation start to
  DOMContentLoaded and to the load event, from the page's own Navigation Timing.

The goal is under 1 s for 200 turns on 2 cores (``load_ms``). Needs Chromium and Playwright for
the browser figures; ``--no-browser`` reports the server's alone.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.store import Store  # noqa: E402
from tests.inspector_seed import seed_conversation  # noqa: E402
from tests.test_widget_browser import CHROMIUM, CHROMIUM_ARGS, _free_port, _healthy  # noqa: E402

TOKEN = "bench-inspector-token"


def start_server(data: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {
        **os.environ,
        "GATEBOT_DATA_DIR": str(data),
        "GATEBOT_PORT": str(port),
        "GATEBOT_HOST": "127.0.0.1",
        "GATEBOT_RECORDERS": "memory",
        "GATEBOT_PACK": str(ROOT / "knowledge" / "acme"),
        "GATEBOT_ADMIN_TOKEN": TOKEN,
    }
    env.pop("DATABASE_URL", None)
    exe = Path(sys.executable).parent / "gatebot"
    log = (data / "server.log").open("wb")
    proc = subprocess.Popen(
        [str(exe), "run"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while not _healthy(f"{base}/healthz"):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"gatebot run did not start:\n{(data / 'server.log').read_text()}")
        time.sleep(0.2)
    return proc, base


def server_times(base: str, path: str, repeat: int) -> tuple[list[float], str]:
    """Log in with a cookie jar, then time the page; the session cookie's value for Chromium."""
    jar = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    form = urllib.parse.urlencode({"token": TOKEN, "staff": "bench"}).encode()
    opener.open(f"{base}/inspector/login", form, timeout=30).read()
    cookie = next(c.value for c in jar if c.name == "gatebot_inspector")
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        with opener.open(f"{base}{path}", timeout=60) as resp:
            resp.read()
        times.append((time.perf_counter() - started) * 1000)
    return times, cookie


def browser_times(base: str, path: str, cookie: str, repeat: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    out: dict[str, list[float]] = {"dom_ms": [], "load_ms": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        ctx.add_cookies(
            [{"name": "gatebot_inspector", "value": cookie, "url": base + "/inspector"}]
        )
        page = ctx.new_page()
        for _ in range(repeat):
            page.goto(f"{base}{path}", wait_until="load", timeout=60_000)
            nav: dict[str, Any] = page.evaluate(
                "() => performance.getEntriesByType('navigation')[0].toJSON()"
            )
            out["dom_ms"].append(nav["domContentLoadedEventEnd"] - nav["startTime"])
            out["load_ms"].append(nav["loadEventEnd"] - nav["startTime"])
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        proc, base = start_server(data)
        try:
            store = Store(f"sqlite:///{data / 'gatebot.db'}")
            conv = seed_conversation(store, args.turns)
            store.close()
            path = f"/inspector/conversations/{conv.id}"
            server, cookie = server_times(base, path, args.repeat)
            figures: dict[str, Any] = {
                "turns": args.turns,
                "cpus": os.cpu_count(),
                "server_ms": round(statistics.median(server), 1),
            }
            if not args.no_browser and CHROMIUM.exists():
                for key, values in browser_times(base, path, cookie, args.repeat).items():
                    figures[key] = round(statistics.median(values), 1)
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    if args.json:
        print(json.dumps(figures))
        return
    print(f"inspector: {figures['turns']}-turn conversation on {figures['cpus']} CPUs")
    print(f"  server (GET the page, median of {args.repeat}): {figures['server_ms']} ms")
    if "load_ms" in figures:
        print(f"  Chromium DOMContentLoaded: {figures['dom_ms']} ms, load: {figures['load_ms']} ms")


if __name__ == "__main__":
    main()
