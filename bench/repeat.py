"""A repeat step's cost: one message with several changes, through REST, to the demo API.

The sample pack's ``add_seats`` flow on the real web app (aiohttp on loopback, SQLite in a
temporary folder, offline provider). Each conversation reaches the repeat step, then sends
messages that make two changes each ("add 2 seats and 1 storage pack"), a message the self-check
reads back, and "undo". Every change is a real HTTP call from the API catalog to the demo orders
API served by the same process. Also timed alone: the phrase reader and the self-check.

    .venv/bin/python bench/repeat.py [--conversations 40] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from aiohttp.test_utils import TestClient, TestServer  # noqa: E402

from bench.pipeline import summary  # noqa: E402
from bot.app import App  # noqa: E402
from bot.config import Settings  # noqa: E402

SETUP = ["I'd like to add seats please", "sam@example.com", "sub_acme1"]
CHANGES = ["add 2 seats and 1 storage pack", "undo"]
DOUBTED = ["add 1 seat, and maybe some storage", "yes", "undo"]
EXPECT = ["Added 2 seats (now 7). Added 1 storage pack (now 2).", "Removed 1 storage pack (now 1)."]


def _expect(reply: str, want: str) -> None:
    """A bench of turns that went wrong would time the wrong thing: stop instead."""
    if want not in reply:
        raise SystemExit(f"unexpected reply: {reply!r} (wanted {want!r})")


async def conversations(n: int) -> dict[str, Any]:
    from gatebot_web.server import build_web_app

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            pack=ROOT / "knowledge" / "acme", data_dir=Path(tmp), model="offline", recorders=[]
        )
        app = App(settings)
        await app.start(channels=False)
        times: dict[str, list[float]] = {"two_changes": [], "undo": [], "self_check_read_back": []}
        try:
            async with TestClient(TestServer(build_web_app(app), host="127.0.0.1")) as client:
                os.environ["ACME_ORDERS_URL"] = str(client.make_url("/demo-api"))
                for c in range(n + 2):
                    conv = await (await client.post("/api/conversations", json={})).json()

                    async def say(
                        text: str, k: int, conv: dict[str, str] = conv
                    ) -> tuple[float, str]:
                        start = time.perf_counter()
                        resp = await client.post(
                            f"/api/conversations/{conv['id']}/messages",
                            json={"text": text, "client_message_id": f"m{k}"},
                            headers={"Authorization": f"Bearer {conv['token']}"},
                        )
                        body = await resp.json()
                        replies = " ".join(r["text"] for r in body["replies"] if "text" in r)
                        return (time.perf_counter() - start) * 1000, replies

                    k = 0
                    for text in SETUP:
                        await say(text, k := k + 1)
                    for text, kind, want in zip(
                        CHANGES, ("two_changes", "undo"), EXPECT, strict=True
                    ):
                        ms, reply = await say(text, k := k + 1)
                        _expect(reply, want)
                        if c >= 2:  # warm-up conversations
                            times[kind].append(ms)
                    for text in DOUBTED:
                        ms, reply = await say(text, k := k + 1)
                        if text == DOUBTED[0]:
                            _expect(reply, "Is that right?")
                            if c >= 2:
                                times["self_check_read_back"].append(ms)
        finally:
            await app.stop()
    return {k: summary(v) for k, v in times.items()}


def reader_alone(repeats: int = 2000) -> dict[str, Any]:
    from bot.flows.steps.phrases import read_message
    from bot.flows.steps.selfcheck import Made, check

    items = {"seats": ["seat"], "storage_packs": ["storage pack"], "priority_support": []}
    text = "scratch the storage pack, make it 3 seats, and maybe some priority support"
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        readings = read_message(text, items, ("seats", "question"))
        check([Made(readings[1], "seats", 8, 8)], readings)
        times.append((time.perf_counter() - start) * 1000)
    return summary(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=40)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    result = {
        "conversations": args.conversations,
        "turn_ms": asyncio.run(conversations(args.conversations)),
        "reader_and_selfcheck_ms": reader_alone(),
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"repeat step over REST, {args.conversations} conversations (demo API on loopback):")
    for kind, s in result["turn_ms"].items():
        print(f"  {kind:<22} p50 {s['p50']:>8.2f} ms   p99 {s['p99']:>8.2f} ms")
    s = result["reader_and_selfcheck_ms"]
    print(f"  reader + self-check   p50 {s['p50']:>8.3f} ms   p99 {s['p99']:>8.3f} ms (alone)")


if __name__ == "__main__":
    main()
