"""The store's share of one turn: receive a message, read what the turn needs, complete the turn.

    python bench/store_turn.py [--turns 500] [--database-url postgresql://...] [--json]

One thread, one turn after another, on a fresh SQLite file (or the given database), conversations
of 10 turns with a reply each. Reports wall and CPU time per turn (``time.thread_time``: what the
calling thread spends, which on the server is the thread that would otherwise be the event loop),
p50 and p99 of the wall time. Run from a checkout without ``Store.receive_turn`` (before the lean
hot path), it makes the calls the agent made then: receive, get_conversation, messages and the
ORM's complete_turn.

``--via runner`` makes the same calls from an event loop through ``StoreRunner`` (the database
threads) and ``--via asyncio`` the same statements through SQLAlchemy's asyncio engine (psycopg 3
async on PostgreSQL, aiosqlite on SQLite when installed); both report the event loop thread's CPU
per turn, which is what the choice between them is about.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.store import Store  # noqa: E402
from bot.turn.record import new_record  # noqa: E402


def one_turn(store: Store, conv_id: str, seq: int, key: str) -> None:
    text = f"message {key} about pricing for {seq} seats"
    if hasattr(store, "receive_turn"):
        received = store.receive_turn(conv_id, "web", key, text)
        conv, msg = received.conversation, received.message
    else:  # the calls a turn made before
        msg, _ = store.receive(conv_id, "web", key, text)
        conv = store.get_conversation(conv_id)
        store.messages(conv_id)
    assert conv is not None
    record: Any = new_record(conv_id, seq, text, "web", key, "off")
    record["scope"] = {"verdict": "in", "rule": "x"}
    record["move"] = {"name": "answer", "why": "bench", "escalate": False}
    record["reads"] = [{"head": "intent", "answer": "pricing"}]
    record["timings"] = {"total_ms": 1.0}
    conv.turn_count, conv.state = seq, {"values": {"seats": {"value": str(seq)}}}
    store.complete_turn(conv, msg, record, [{"type": "text", "text": f"reply {seq}"}], "web")


async def asyncio_turn(engine: Any, conv_id: str, n: int, key: str) -> None:
    """The receive and complete statements of one turn through SQLAlchemy's asyncio engine."""
    import sqlalchemy as sa

    from bot.store.inbox import CONVERSATIONS, MESSAGES, TURNS
    from bot.store.models import now

    row = {
        "conversation_id": conv_id,
        "channel": "web",
        "external_id": key,
        "role": "customer",
        "text": f"message {key}",
        "status": "received",
        "author": None,
        "created_at": now(),
    }
    async with engine.begin() as c:
        msg_id = (await c.execute(sa.insert(MESSAGES), row)).inserted_primary_key[0]
        (await c.execute(sa.select(CONVERSATIONS).where(CONVERSATIONS.c.id == conv_id))).first()
        (await c.execute(sa.select(MESSAGES).where(MESSAGES.c.conversation_id == conv_id))).all()
    async with engine.begin() as c:
        await c.execute(
            sa.update(MESSAGES).where(MESSAGES.c.id == msg_id).values(status="processed")
        )
        await c.execute(
            sa.insert(TURNS),
            {
                "conversation_id": conv_id,
                "seq": n % 10 + 1,
                "message_id": msg_id,
                "move": "answer",
                "scope": "in",
                "intent": "pricing",
                "escalate": False,
                "total_ms": 1.0,
                "record": {"seq": n},
                "replies": [],
                "created_at": now(),
            },
        )
        await c.execute(sa.insert(MESSAGES), {**row, "external_id": None, "role": "agent"})
        await c.execute(
            sa.update(CONVERSATIONS)
            .where(CONVERSATIONS.c.id == conv_id)
            .values(turn_count=n % 10 + 1, state={"n": n})
        )


async def on_loop(store: Store, url: str, via: str, turns: int) -> tuple[float, list[float]]:
    """(loop thread CPU ms per turn, wall ms per turn) with the store's calls awaited."""
    from sqlalchemy.ext.asyncio import create_async_engine

    from bot.store.runner import StoreRunner

    runner = StoreRunner(store)
    # aiosqlite is not a gatebot dependency: install it to compare on SQLite.
    engine = (
        create_async_engine(url.replace("sqlite://", "sqlite+aiosqlite://"))
        if via == "asyncio"
        else None
    )
    walls: list[float] = []
    cpu0 = time.thread_time()
    for n in range(turns):
        if n % 10 == 0:
            conv, _ = await runner.call(store.create_conversation, "web")
        started, key = time.perf_counter(), f"{conv.id}:{n}"
        if via == "runner":
            await runner.call(one_turn, store, conv.id, n % 10 + 1, key)
        else:
            await asyncio_turn(engine, conv.id, n, key)
        walls.append((time.perf_counter() - started) * 1000)
    cpu = (time.thread_time() - cpu0) * 1000 / turns
    runner.close()
    if engine is not None:
        await engine.dispose()
    return cpu, walls


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--turns", type=int, default=500)
    p.add_argument("--database-url", default="")
    p.add_argument("--via", choices=["direct", "runner", "asyncio"], default="direct")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if args.via != "direct":
        with tempfile.TemporaryDirectory() as tmp:
            url = args.database_url or f"sqlite:///{tmp}/bench.db"
            store = Store(url)
            store.migrate()
            cpu, walls = asyncio.run(on_loop(store, store.url, args.via, args.turns))
            store.close()
        walls.sort()
        print(
            json.dumps(
                {
                    "via": args.via,
                    "turns": args.turns,
                    "loop_cpu_ms_per_turn": round(cpu, 3),
                    "wall_ms_p50": round(walls[len(walls) // 2], 3),
                }
            )
        )
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(args.database_url or f"sqlite:///{tmp}/bench.db")
        store.migrate()
        walls: list[float] = []
        cpu0 = time.thread_time()
        for n in range(args.turns):
            if n % 10 == 0:
                conv, _ = store.create_conversation("web", with_token=True)
            started = time.perf_counter()
            one_turn(store, conv.id, n % 10 + 1, f"{conv.id}:{n}")
            walls.append((time.perf_counter() - started) * 1000)
        cpu = (time.thread_time() - cpu0) * 1000 / args.turns
        store.close()
    walls.sort()
    out = {
        "path": "lean" if hasattr(Store, "receive_turn") else "orm",
        "turns": args.turns,
        "cpu_ms_per_turn": round(cpu, 3),
        "wall_ms_p50": round(walls[len(walls) // 2], 3),
        "wall_ms_p99": round(walls[int(len(walls) * 0.99) - 1], 3),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
