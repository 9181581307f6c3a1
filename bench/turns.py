"""Turn throughput and latency through the REST API, with the offline provider.

Starts the real app in-process (the web channel on a free loopback port), then drives many
conversations at once over HTTP: each conversation sends its messages one after another, as a
person would, while up to ``--concurrency`` conversations are in flight. Latency is measured on
the client, from the POST to its response. See ``bench/README.md``.

    .venv/bin/python bench/turns.py
    .venv/bin/python bench/turns.py --database-url postgresql://root@127.0.0.1:5432/test --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import random
import resource
import socket
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/turns.py`
    sys.path.insert(0, str(ROOT))

from bot.app import App  # noqa: E402
from bot.config import Settings  # noqa: E402

HOST = "127.0.0.1"
RATE_LIMIT_PER_MINUTE = 20  # the server's per-conversation limit (gatebot_web.server)

# What customers write, by kind. Each conversation is a seeded draw from these.
GREETINGS = [
    "hi",
    "Hello there, quick question",
    "hey, anyone around?",
    "good morning",
]
FAQ = [
    "How much does Acme Cloud cost?",
    "what are your pricing plans?",
    "Is there a free trial?",
    "Does Acme Pipelines support Docker builds?",
    "can Monitor send alerts to Slack?",
    "Do you integrate with GitHub and GitLab?",
    "How do I reset my password? I'm locked out",
    "Where do I find my invoices?",
    "Where is my data stored? We need GDPR compliance",
    "does pipelines cache docker image layers between builds?",
]
SUPPORT = [
    "my build is failing with an error since this morning",
    "Monitor says my site is down but it isn't",
    "I was charged twice this month, can I get a refund?",
    "I can't log in with SSO",
]
OUT_OF_SCOPE = [
    "what's the weather forecast for tomorrow?",
    "who won the football match last night?",
    "do you have a good recipe for banana bread?",
    "what medicine should I take for these symptoms?",
]
DEMO_FLOW = [
    "I'd like to book a demo",
    "We want to run CI/CD pipelines for our monorepo and monitor uptime",
    "about 25 people",
    "jane.doe@example.com",
]
TRIAL_FLOW = [
    "I want to sign up for a free trial",
    "you can reach me at sam@example.org",
]
CLOSINGS = [
    "I want to talk to a person",
    "can I speak to a human please",
    "no thanks, not interested",
    "that's all, thanks. bye",
]


def build_script(rng: random.Random, length: int) -> list[str]:
    """One conversation: a greeting, a mix of flows and single questions, then a closing."""
    if length <= 0:
        return []
    body: list[str] = []
    while len(body) < length:
        roll = rng.random()
        if roll < 0.15:
            body += DEMO_FLOW
        elif roll < 0.25:
            body += TRIAL_FLOW
        elif roll < 0.65:
            body.append(rng.choice(FAQ))
        elif roll < 0.80:
            body.append(rng.choice(SUPPORT))
        else:
            body.append(rng.choice(OUT_OF_SCOPE))
    script = [rng.choice(GREETINGS), *body]
    if length >= 3:
        script = [*script[: length - 1], rng.choice(CLOSINGS)]
    return script[:length]


@dataclass
class Results:
    latencies_ms: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)
    moves: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    conversations_done: int = 0

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list (0.0 when empty)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(pct / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def peak_rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux, bytes on macOS.
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


class Driver:
    """Drives conversations against the API and collects what happened."""

    def __init__(self, http: aiohttp.ClientSession, base: str, results: Results) -> None:
        self.http, self.base, self.results = http, base, results

    async def create(self) -> tuple[str, str] | None:
        try:
            async with self.http.post(f"{self.base}/api/conversations", json={}) as resp:
                body = await resp.json()
                if resp.status != 201:
                    self.results.errors[f"create:http_{resp.status}"] += 1
                    return None
                return str(body["id"]), str(body["token"])
        except (aiohttp.ClientError, TimeoutError, ValueError, KeyError) as exc:
            self.results.errors[f"create:{type(exc).__name__}"] += 1
            return None

    async def send(
        self, conv_id: str, token: str, text: str, client_id: str, *, counted: bool = True
    ) -> bool:
        url = f"{self.base}/api/conversations/{conv_id}/messages"
        headers = {"Authorization": f"Bearer {token}"}
        payload = {"text": text, "client_message_id": client_id}
        started = time.perf_counter()
        try:
            async with self.http.post(url, json=payload, headers=headers) as resp:
                body: dict[str, Any] = await resp.json()
                elapsed_ms = (time.perf_counter() - started) * 1000
                if resp.status != 200:
                    code = body.get("error", {}).get("code", "")
                    self.results.errors[f"turn:http_{resp.status}:{code}"] += 1
                    return False
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            self.results.errors[f"turn:{type(exc).__name__}"] += 1
            return False
        if counted:
            record = body.get("turn", {})
            self.results.latencies_ms.append(elapsed_ms)
            self.results.server_ms.append(float(record.get("timings", {}).get("total_ms", 0.0)))
            self.results.moves[str(record.get("move", {}).get("name"))] += 1
        return True

    async def conversation(
        self, script: list[str], gate: asyncio.Semaphore, *, counted: bool = True
    ) -> None:
        async with gate:
            created = await self.create()
            if created is None:
                return
            conv_id, token = created
            for n, text in enumerate(script):
                await self.send(conv_id, token, text, f"m{n}", counted=counted)
            if counted:
                self.results.conversations_done += 1


async def run_bench(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    scripts = [build_script(rng, args.messages) for _ in range(args.conversations)]
    results = Results()
    with tempfile.TemporaryDirectory(prefix="gatebot-bench-") as tmp:
        settings = Settings(
            pack=ROOT / "knowledge" / "acme",
            data_dir=Path(tmp),
            host=HOST,
            port=free_port(),
            recorders=[],
            channels=["web"],
            database_url=args.database_url or "",
            # capacity: every turn queues, none is shed; every simulated
            # customer shares one loopback address, so no per-IP limit
            max_turns=0,
            rate_conversations=0,
            rate_messages=0,
        )
        app = App(settings)
        await app.start()
        try:
            base = f"http://{HOST}:{settings.port}"
            timeout = aiohttp.ClientTimeout(total=args.request_timeout)
            connector = aiohttp.TCPConnector(limit=args.concurrency)
            async with aiohttp.ClientSession(timeout=timeout, connector=connector) as http:
                driver = Driver(http, base, Results())  # warm-up: its figures are dropped
                await driver.conversation(
                    build_script(rng, args.warmup), asyncio.Semaphore(1), counted=False
                )
                driver.results = results
                gate = asyncio.Semaphore(args.concurrency)
                rss_before = peak_rss_mb()
                started = time.perf_counter()
                tasks = [asyncio.create_task(driver.conversation(s, gate)) for s in scripts]
                finished = True
                try:
                    async with asyncio.timeout(args.deadline):
                        await asyncio.gather(*tasks)
                except TimeoutError:
                    finished = False
                    for task in tasks:
                        task.cancel()
                    await asyncio.gather(*tasks, return_exceptions=True)
                wall = time.perf_counter() - started
        finally:
            await app.stop()
    return summarise(args, results, wall, finished, rss_before, app.store.dialect)


def summarise(
    args: argparse.Namespace,
    results: Results,
    wall: float,
    finished: bool,
    rss_before: float,
    dialect: str,
) -> dict[str, Any]:
    lat = sorted(results.latencies_ms)
    server = sorted(results.server_ms)
    return {
        "database": dialect,
        "conversations": args.conversations,
        "messages_per_conversation": args.messages,
        "concurrency": args.concurrency,
        "finished": finished,
        "conversations_done": results.conversations_done,
        "turns": len(lat),
        "errors": results.error_count,
        "error_kinds": dict(results.errors),
        "wall_s": round(wall, 3),
        "turns_per_s": round(len(lat) / wall, 1) if wall > 0 else 0.0,
        "latency_ms": {
            "p50": round(percentile(lat, 50), 2),
            "p90": round(percentile(lat, 90), 2),
            "p99": round(percentile(lat, 99), 2),
            "max": round(lat[-1], 2) if lat else 0.0,
            "mean": round(sum(lat) / len(lat), 2) if lat else 0.0,
        },
        "server_turn_ms": {
            "p50": round(percentile(server, 50), 2),
            "p99": round(percentile(server, 99), 2),
        },
        "moves": dict(results.moves.most_common()),
        "peak_rss_mb_after_start": round(rss_before, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def render_table(summary: dict[str, Any]) -> str:
    lat = summary["latency_ms"]
    rows = [
        ("database", summary["database"]),
        (
            "conversations x messages",
            f"{summary['conversations']} x {summary['messages_per_conversation']}"
            f" (concurrency {summary['concurrency']})",
        ),
        (
            "turns measured",
            f"{summary['turns']} in {summary['wall_s']} s"
            + ("" if summary["finished"] else "  (DEADLINE HIT: partial)"),
        ),
        ("turns/s", f"{summary['turns_per_s']}"),
        (
            "latency ms p50/p90/p99/max",
            f"{lat['p50']} / {lat['p90']} / {lat['p99']} / {lat['max']}",
        ),
        (
            "server turn ms p50/p99",
            f"{summary['server_turn_ms']['p50']} / {summary['server_turn_ms']['p99']}",
        ),
        ("errors", f"{summary['errors']} {summary['error_kinds'] or ''}".rstrip()),
        (
            "peak RSS MB",
            f"{summary['peak_rss_mb']} (after start: {summary['peak_rss_mb_after_start']})",
        ),
        ("moves", ", ".join(f"{k} {v}" for k, v in summary["moves"].items())),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--conversations", type=int, default=200, help="conversations (default 200)")
    p.add_argument(
        "--messages",
        type=int,
        default=10,
        help=f"messages per conversation, at most {RATE_LIMIT_PER_MINUTE} (default 10)",
    )
    p.add_argument(
        "--concurrency", type=int, default=50, help="conversations in flight at once (default 50)"
    )
    p.add_argument(
        "--database-url",
        default=None,
        help="e.g. postgresql://root@127.0.0.1:5432/test (default: SQLite in a temporary folder)",
    )
    p.add_argument("--warmup", type=int, default=5, help="uncounted warm-up turns (default 5)")
    p.add_argument(
        "--request-timeout", type=float, default=30.0, help="seconds per request (default 30)"
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=600.0,
        help="seconds for the whole measured run; stops there (default 600)",
    )
    p.add_argument("--seed", type=int, default=1, help="seed for the message draw (default 1)")
    p.add_argument("--json", action="store_true", help="print only one JSON object")
    args = p.parse_args(argv)
    if not 1 <= args.messages <= RATE_LIMIT_PER_MINUTE:
        p.error(
            f"--messages must be 1-{RATE_LIMIT_PER_MINUTE}: the server allows "
            f"{RATE_LIMIT_PER_MINUTE} messages a minute per conversation"
        )
    if not 0 <= args.warmup <= RATE_LIMIT_PER_MINUTE:
        p.error(f"--warmup must be 0-{RATE_LIMIT_PER_MINUTE}")
    if args.conversations < 1 or args.concurrency < 1:
        p.error("--conversations and --concurrency must be at least 1")
    if args.request_timeout <= 0 or args.deadline <= 0:
        p.error("--request-timeout and --deadline must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    summary = asyncio.run(run_bench(args))
    if not args.json:
        print(render_table(summary))
    print(json.dumps(summary, sort_keys=True))
    return 0 if summary["finished"] and summary["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
