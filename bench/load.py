"""Load on a running gatebot process through the REST API: capacity, and latency at a rate.

Starts ``gatebot run`` as its own process (web channel only, offline provider, no recorders, the
sample pack) so the server's CPU and memory are its own, then drives it over loopback HTTP:

    python bench/load.py closed --concurrency 100 --duration 30         # capacity at N at once
    python bench/load.py open --conversations 1000 --every 5 --duration 30   # 200 turns/s offered
    python bench/load.py closed --database-url postgresql://root@127.0.0.1:5432/test --json

closed: ``--concurrency`` customers each send a message, wait for the answer, and send the next at
once (a new conversation every 15 messages, under the 20-a-minute limit): the throughput is the
process's capacity; a shed customer waits ``Retry-After``, as the widget does.
open: ``--conversations`` customers each write every ``--every`` seconds (a random phase each, so
the offered rate is steady), whether or not the answers keep up: what happens to latency, errors
and shed requests at that rate. Every message text is distinct
(templates with names, numbers and products filled in), so no cache sees the same text twice.

Reports turns/s, latency p50/p90/p99/max (client side, POST to full answer), errors by kind
(a shed turn is ``http_503:overloaded``), the server's CPU per turn (utime + stime from /proc: the
whole process, and its main thread alone, which runs the event loop) and its RSS now and at peak.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from turns import free_port, percentile  # noqa: E402

HOST = "127.0.0.1"
MESSAGES_PER_CONVERSATION = 15  # under the server's 20 a minute per conversation

OPENERS = ["", "hi, ", "hello, ", "quick question: ", "hey team, ", "good morning! "]
TEMPLATES = [
    "how much does Acme Cloud cost for {n} seats?",
    "is there a free trial for a team of {n}?",
    "does Pipelines support Docker builds for our {thing} repo?",
    "can Monitor send alerts to Slack when {thing} is down?",
    "do you integrate with GitHub for {n} repositories?",
    "I can't log in, I tried {n} times, my name is {name}",
    "where do I find the invoice from {month}?",
    "my build {n} is failing since this morning",
    "I was charged twice in {month}, can I get a refund?",
    "I'd like to book a demo for {n} engineers",
    "we are about {n} people, what plan fits?",
    "you can reach me at {name}{n}@example.com",
    "what's the weather in {city} tomorrow?",
    "who won the match in {city} last night?",
    "I want to talk to a person about order {n}",
]
NAMES = ["jane", "sam", "li", "omar", "ana", "kofi", "mia", "raj", "eva", "tom"]
THINGS = ["api", "website", "billing", "mobile", "data", "docs", "search", "auth"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August"]
CITIES = ["Paris", "Lagos", "Lima", "Osaka", "Oslo", "Pune", "Quito", "Rome"]


class Texts:
    """Distinct customer messages: a template filled in, never the same text twice."""

    def __init__(self, seed: int) -> None:
        self.rng, self.seen = random.Random(seed), set[str]()

    def next(self) -> str:
        r = self.rng
        while True:
            text = r.choice(OPENERS) + r.choice(TEMPLATES).format(
                n=r.randint(2, 5000),
                name=r.choice(NAMES),
                thing=r.choice(THINGS),
                month=r.choice(MONTHS),
                city=r.choice(CITIES),
            )
            if text not in self.seen:
                self.seen.add(text)
                return text


@dataclass
class Results:
    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    counting: bool = False

    def ok(self, ms: float) -> None:
        if self.counting:
            self.latencies_ms.append(ms)

    def fail(self, kind: str) -> None:
        if self.counting:
            self.errors[kind] += 1


class Server:
    """``gatebot run`` in its own process, and what /proc says about it."""

    def __init__(
        self, database_url: str, data_dir: str, extra_env: dict[str, str], workers: int = 1
    ) -> None:
        self.port, self.workers = free_port(), workers
        self.log = Path(data_dir) / "server.log"
        env = {
            **os.environ,
            "GATEBOT_DATA_DIR": data_dir,
            "GATEBOT_RECORDERS": "none",
            "GATEBOT_CHANNELS": "web",
            "GATEBOT_MODEL": "offline",
            # Every simulated customer shares one loopback address: no per-IP limit.
            "GATEBOT_RATE_CONVERSATIONS": "0",
            "GATEBOT_RATE_MESSAGES": "0",
            "PYTHONPATH": f"{ROOT}:{ROOT / 'plugins'}",
            **extra_env,
        }
        if database_url:
            env["DATABASE_URL"] = database_url
        code = "import sys; from bot.cli import main; sys.argv[0] = 'gatebot'; main()"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                code,
                "run",
                "--port",
                str(self.port),
                "--workers",
                str(workers),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(self.log, "w"),  # noqa: SIM115
        )
        self.base = f"http://{HOST}:{self.port}"

    async def ready(self, http: aiohttp.ClientSession, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with http.get(f"{self.base}/healthz") as resp:
                    if resp.status == 200 and self._all_listening():
                        return
            await asyncio.sleep(0.5)
        raise RuntimeError("the server did not answer /healthz in time")

    def _all_listening(self) -> bool:
        """Every worker serves (each says so once): the kernel spreads connections only over
        the ones already listening, so one worker up early would take the whole warm-up."""
        return self.log.read_text(errors="replace").count("widget and API at") >= self.workers

    def pids(self) -> list[int]:
        """The server's processes: itself, and with ``--workers`` the workers it forked."""
        pid = self.proc.pid
        children = Path(f"/proc/{pid}/task/{pid}/children")
        with contextlib.suppress(OSError):
            return [pid, *map(int, children.read_text().split())]
        return [pid]

    def cpu_seconds(self, loop_only: bool = False) -> float:
        """CPU time of all its processes, all threads; or of each one's main thread, which runs
        its event loop (summed over the workers)."""
        total = 0.0
        for pid in self.pids():
            stat = Path(f"/proc/{pid}/task/{pid}/stat" if loop_only else f"/proc/{pid}/stat")
            with contextlib.suppress(OSError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return total

    def memory_mb(self) -> dict[str, float]:
        """RSS now and at peak, summed over its processes (pages the workers share after the
        fork count once per process)."""
        out = {"rss_mb": 0.0, "peak_rss_mb": 0.0}
        for pid in self.pids():
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    key, _, value = line.partition(":")
                    if key in ("VmRSS", "VmHWM"):
                        name = "rss_mb" if key == "VmRSS" else "peak_rss_mb"
                        out[name] += int(value.split()[0]) / 1024
        return out

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Customer:
    """One customer at a time on one conversation, starting a new one every 15 messages."""

    def __init__(self, http: aiohttp.ClientSession, base: str, texts: Texts, results: Results):
        self.http, self.base, self.texts, self.results = http, base, texts, results
        self.conv: tuple[str, str] | None = None
        self.sent = 0
        #: closed loop: a shed customer waits Retry-After before writing again (open: the
        #: schedule goes on; a shed message is simply lost)
        self.backs_off = False

    async def open(self) -> bool:
        try:
            async with self.http.post(f"{self.base}/api/conversations", json={}) as resp:
                body = await resp.json()
                if resp.status != 201:
                    self.results.fail(f"create:http_{resp.status}")
                    return False
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            self.results.fail(f"create:{type(exc).__name__}")
            return False
        self.conv, self.sent = (str(body["id"]), str(body["token"])), 0
        return True

    async def send(self) -> None:
        if (self.conv is None or self.sent >= MESSAGES_PER_CONVERSATION) and not await self.open():
            return
        assert self.conv is not None
        conv_id, token = self.conv
        self.sent += 1
        payload = {"text": self.texts.next(), "client_message_id": f"m{self.sent}"}
        headers = {"Authorization": f"Bearer {token}"}
        started = time.perf_counter()
        try:
            url = f"{self.base}/api/conversations/{conv_id}/messages"
            async with self.http.post(url, json=payload, headers=headers) as resp:
                body: dict[str, Any] = await resp.json()
                if resp.status != 200:
                    code = body.get("error", {}).get("code", "")
                    self.results.fail(f"http_{resp.status}:{code}")
                    if resp.status == 503 and self.backs_off:  # as the widget does
                        await asyncio.sleep(float(resp.headers.get("Retry-After", "1")))
                    return
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            self.results.fail(type(exc).__name__)
            return
        self.results.ok((time.perf_counter() - started) * 1000)


async def closed_loop(customers: list[Customer], stop_at: float) -> None:
    async def one(customer: Customer) -> None:
        while time.monotonic() < stop_at:
            await customer.send()

    await asyncio.gather(*(one(c) for c in customers))


async def open_loop(customers: list[Customer], every: float, stop_at: float) -> None:
    """Each customer writes every ``every`` seconds from a random phase, answered or not."""

    async def one(customer: Customer, phase: float) -> None:
        pending: set[asyncio.Task[None]] = set()
        next_at = time.monotonic() + phase
        while next_at < stop_at:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            task = asyncio.create_task(customer.send())
            pending.add(task)
            task.add_done_callback(pending.discard)
            next_at += every
        if pending:
            await asyncio.wait(pending)

    rng = random.Random(1)
    await asyncio.gather(*(one(c, rng.uniform(0, every)) for c in customers))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="gatebot-load-") as data_dir:
        extra = dict(kv.split("=", 1) for kv in args.env)
        server = Server(args.database_url, data_dir, extra, args.workers)
        try:
            return await _drive(args, server)
        finally:
            server.stop()


async def _drive(args: argparse.Namespace, server: Server) -> dict[str, Any]:
    results, texts = Results(), Texts(args.seed)
    n = args.concurrency if args.mode == "closed" else args.conversations
    limit = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=args.request_timeout)
    async with aiohttp.ClientSession(connector=limit, timeout=timeout) as http:
        await server.ready(http)
        customers = [Customer(http, server.base, texts, results) for _ in range(n)]
        for start in range(0, n, 50):  # conversations exist before the clock starts
            await asyncio.gather(*(c.open() for c in customers[start : start + 50]))
        await closed_loop(customers[:4], time.monotonic() + args.warmup)  # uncounted warm-up
        cpu0, loop0 = server.cpu_seconds(), server.cpu_seconds(loop_only=True)
        results.counting, started = True, time.monotonic()
        stop_at = started + args.duration
        if args.mode == "closed":
            for customer in customers:
                customer.backs_off = True
            await closed_loop(customers, stop_at)
        else:
            await open_loop(customers, args.every, stop_at)
        wall, cpu = time.monotonic() - started, server.cpu_seconds() - cpu0
        loop = server.cpu_seconds(loop_only=True) - loop0
        return summarise(args, results, wall, (cpu, loop), server.memory_mb())


def summarise(
    args: argparse.Namespace,
    results: Results,
    wall: float,
    cpu_and_loop: tuple[float, float],
    memory: dict[str, float],
) -> dict[str, Any]:
    lat = sorted(results.latencies_ms)
    turns, (cpu, loop) = len(lat), cpu_and_loop
    summary: dict[str, Any] = {
        "mode": args.mode,
        "database": "postgresql" if args.database_url.startswith("postgres") else "sqlite",
        "workers": args.workers,
        "concurrency" if args.mode == "closed" else "conversations": (
            args.concurrency if args.mode == "closed" else args.conversations
        ),
        "duration_s": round(wall, 1),
        "turns": turns,
        "turns_per_s": round(turns / wall, 1) if wall else 0.0,
        "latency_ms": {
            name: round(percentile(lat, pct), 1)
            for name, pct in (("p50", 50), ("p90", 90), ("p99", 99), ("max", 100))
        },
        "errors": sum(results.errors.values()),
        "error_kinds": dict(results.errors),
        "cpu_ms_per_turn": round(cpu / turns * 1000, 2) if turns else None,
        "loop_cpu_ms_per_turn": round(loop / turns * 1000, 2) if turns else None,
        "server_cpu_s": round(cpu, 1),
        **{k: round(v, 1) for k, v in memory.items()},
        "env": args.env,
    }
    if args.mode == "open":
        summary["offered_per_s"] = round(args.conversations / args.every, 1)
    return summary


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("mode", choices=["closed", "open"])
    p.add_argument("--concurrency", type=int, default=100, help="closed: customers at once")
    p.add_argument("--conversations", type=int, default=1000, help="open: customers writing")
    p.add_argument("--every", type=float, default=5.0, help="open: seconds between messages")
    p.add_argument("--duration", type=float, default=30.0, help="measured seconds")
    p.add_argument("--warmup", type=float, default=5.0, help="uncounted seconds first")
    p.add_argument("--request-timeout", type=float, default=120.0)
    p.add_argument("--database-url", default="", help="default: SQLite in a temporary folder")
    p.add_argument("--env", action="append", default=[], help="KEY=VALUE for the server")
    p.add_argument("--workers", type=int, default=1, help="gatebot run --workers N")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="one JSON line only")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    summary = asyncio.run(run(args))
    if not args.json:
        lat = summary["latency_ms"]
        print(
            f"{summary['mode']} on {summary['database']}: {summary['turns_per_s']} turns/s, "
            f"p50/p90/p99 {lat['p50']}/{lat['p90']}/{lat['p99']} ms, errors {summary['errors']}, "
            f"CPU {summary['cpu_ms_per_turn']} ms/turn, RSS {summary.get('rss_mb')} MB",
            file=sys.stderr,
        )
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
