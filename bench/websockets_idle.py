"""Idle widget websockets held open against one ``gatebot run``: what each costs the server.

Starts ``gatebot run`` (web channel, offline provider, SQLite in a temporary folder unless
``--database-url``; bench/load.py's ``Server``), creates ``--conversations`` widget conversations,
then opens ``--sockets`` live-event websockets (``/api/conversations/{id}/events``) spread over
them, ``--concurrency`` connects at a time from one aiohttp client process. It reads the server's
RSS from /proc before the sockets, with all of them open and idle, and after closing them:

    python bench/websockets_idle.py                     # 10,000 sockets on 200 conversations
    python bench/websockets_idle.py --sockets 2000 --json

The file-descriptor limit is raised to its hard limit here; the server inherits it. The run stops
by itself: every phase has a deadline (``--deadline`` seconds in all) and a socket that did not
open in time counts as failed, never as open.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import Server


def raise_fd_limit(wanted: int) -> int:
    """Raise this process's (and so the server's) open-file limit toward ``wanted``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


async def create_conversations(
    http: aiohttp.ClientSession, base: str, n: int, concurrency: int, until: float
) -> list[tuple[str, str]]:
    made: list[tuple[str, str]] = []
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            if time.monotonic() > until:
                return
            async with http.post(f"{base}/api/conversations", json={}) as resp:
                if resp.status == 201:
                    body = await resp.json()
                    made.append((str(body["id"]), str(body["token"])))

    await asyncio.gather(*(one() for _ in range(n)), return_exceptions=True)
    return made


async def open_sockets(
    http: aiohttp.ClientSession,
    base: str,
    convs: list[tuple[str, str]],
    n: int,
    concurrency: int,
    until: float,
) -> tuple[list[aiohttp.ClientWebSocketResponse], Counter[str]]:
    sockets: list[aiohttp.ClientWebSocketResponse] = []
    failed: Counter[str] = Counter()
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        conv_id, token = convs[i % len(convs)]
        async with gate:
            if time.monotonic() > until:
                failed["deadline"] += 1
                return
            try:
                url = f"{base}/api/conversations/{conv_id}/events?token={token}"
                sockets.append(await http.ws_connect(url, heartbeat=None, autoping=True))
            except aiohttp.WSServerHandshakeError as exc:
                failed[f"http_{exc.status}"] += 1
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                failed[type(exc).__name__] += 1

    await asyncio.gather(*(one(i) for i in range(n)))
    return sockets, failed


async def run(args: argparse.Namespace) -> dict[str, Any]:
    limit = raise_fd_limit(args.sockets * 2 + 1024)
    until = time.monotonic() + args.deadline
    with tempfile.TemporaryDirectory(prefix="gatebot-ws-") as data_dir:
        env = {"GATEBOT_TORCH_THREADS": "1"}
        server = Server(args.database_url, data_dir, env)
        try:
            return await _drive(args, server, until, limit)
        finally:
            server.stop()


async def _drive(
    args: argparse.Namespace, server: Server, until: float, fds: int
) -> dict[str, Any]:
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        await server.ready(http, timeout=max(5.0, until - time.monotonic()))
        started = time.monotonic()
        n_conv = min(args.conversations, args.sockets)
        convs = await create_conversations(http, server.base, n_conv, args.concurrency, until)
        if not convs:
            raise RuntimeError("the server created no conversation")
        made_s = time.monotonic() - started
        await asyncio.sleep(1.0)
        before = server.memory_mb()["rss_mb"]
        started = time.monotonic()
        sockets, failed = await open_sockets(
            http, server.base, convs, args.sockets, args.concurrency, until
        )
        open_s = time.monotonic() - started
        await asyncio.sleep(args.idle)  # idle: nothing sent either way (no heartbeat due yet)
        alive = sum(1 for ws in sockets if not ws.closed)
        held = server.memory_mb()["rss_mb"]
        for start in range(0, len(sockets), args.concurrency):
            batch = sockets[start : start + args.concurrency]
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    asyncio.gather(*(ws.close() for ws in batch), return_exceptions=True), 10
                )
        await asyncio.sleep(1.0)
        after = server.memory_mb()["rss_mb"]
    per_socket_kb = (held - before) * 1024 / alive if alive else 0.0
    return {
        "sockets_open": alive,
        "sockets_failed": dict(failed),
        "conversations": len(convs),
        "conversations_s": round(made_s, 1),
        "connect_s": round(open_s, 1),
        "rss_before_mb": round(before, 1),
        "rss_held_mb": round(held, 1),
        "rss_after_close_mb": round(after, 1),
        "per_socket_kb": round(per_socket_kb, 1),
        "fd_limit": fds,
        "database": "postgresql" if args.database_url.startswith("postgres") else "sqlite",
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sockets", type=int, default=10_000, help="websockets to hold open")
    p.add_argument("--conversations", type=int, default=200, help="spread the sockets over")
    p.add_argument("--concurrency", type=int, default=100, help="connects in flight at once")
    p.add_argument("--idle", type=float, default=5.0, help="seconds held open before measuring")
    p.add_argument("--deadline", type=float, default=120.0, help="seconds for the whole run")
    p.add_argument("--database-url", default="", help="default: SQLite in a temporary folder")
    p.add_argument("--json", action="store_true", help="one JSON line only")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    summary = asyncio.run(run(args))
    if not args.json:
        print(
            f"{summary['sockets_open']} idle websockets held open: server RSS "
            f"{summary['rss_before_mb']} MB before, {summary['rss_held_mb']} MB held, "
            f"{summary['per_socket_kb']} KB per socket, {summary['rss_after_close_mb']} MB "
            f"after closing; failed {summary['sockets_failed']}",
            file=sys.stderr,
        )
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
