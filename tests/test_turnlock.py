"""The per-conversation turn lock across processes (bot.store.turnlock): a PostgreSQL advisory
lock and a Redis lease with a fencing token, each seen by two lock owners standing in for two
processes; a lease that lapsed or a lock connection that dropped cannot commit. Also the commit's
own guard on the turn count, and migrations run by two threads at once on an empty schema."""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.errors import StoreError
from bot.store import Store
from bot.store.migrations import MIGRATIONS
from bot.store.turnlock import ConversationBusy, LeaseLost, TurnLocks
from bot.turn.record import new_record

REDIS_URL = "redis://127.0.0.1:6379/0"


def _conv_id() -> str:
    return "test-" + secrets.token_hex(8)


@pytest.fixture
def pg_url(postgres_schema_url: str) -> str:
    return postgres_schema_url  # the advisory lock is PostgreSQL's: no SQLite variant


@pytest.fixture
async def redis() -> AsyncIterator[Any]:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(REDIS_URL, socket_timeout=3, socket_connect_timeout=3)
    try:
        await client.ping()
    except Exception as exc:
        await client.aclose()
        pytest.skip(f"Redis not reachable at {REDIS_URL}: {exc}")
    yield client
    await client.aclose()


async def test_same_process_turns_of_one_conversation_take_turns() -> None:
    locks, order = TurnLocks(), []

    async def turn(name: str) -> None:
        async with locks.hold("c1"):
            order.append(f"{name} in")
            await asyncio.sleep(0)
            order.append(f"{name} out")

    await asyncio.gather(turn("a"), turn("b"))
    assert order == ["a in", "a out", "b in", "b out"]


async def test_advisory_lock_is_seen_by_another_owner_and_lost_with_its_connection(
    pg_url: str,
) -> None:
    from bot.store.pglock import AdvisoryLocks

    first, second = AdvisoryLocks(pg_url), AdvisoryLocks(pg_url)  # two processes' lock owners
    conv = _conv_id()
    try:
        lease = await first.acquire(conv, wait=1)
        with pytest.raises(ConversationBusy):
            await second.acquire(conv, wait=0.2)
        await lease.confirm()
        await lease.release()
        lease = await second.acquire(conv, wait=1)
        await lease.release()
        # The first owner's connection dies (its process did): its lock goes with it.
        held = await first.acquire(conv, wait=1)
        _terminate_backend_of(pg_url, first)
        taken = await second.acquire(conv, wait=5)
        with pytest.raises(LeaseLost):
            await held.confirm()
        await held.release()  # harmless: it never unlocks the other owner's lock
        await taken.confirm()
        await taken.release()
    finally:
        await first.aclose()
        await second.aclose()


def _terminate_backend_of(url: str, owner: Any) -> None:
    pid = owner._conn.driver_connection.info.backend_pid
    store = Store(url)
    try:
        with store.engine.connect() as conn:
            import sqlalchemy as sa

            conn.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    finally:
        store.close()


async def test_turn_locks_on_postgresql_serialise_two_owners(pg_url: str) -> None:
    from bot.store.pglock import AdvisoryLocks

    a, b = TurnLocks(AdvisoryLocks(pg_url)), TurnLocks(AdvisoryLocks(pg_url))
    conv, inside, most = _conv_id(), [0], [0]

    async def turn(locks: TurnLocks) -> None:
        async with locks.hold(conv):
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            await asyncio.sleep(0.05)
            await locks.confirm(conv)
            inside[0] -= 1

    try:
        await asyncio.gather(*(turn(locks) for locks in (a, b, a, b)))
        assert most[0] == 1
    finally:
        await a.aclose()
        await b.aclose()


async def test_redis_lease_fences_a_holder_whose_lease_lapsed(redis: Any) -> None:
    from bot.store.redislease import RedisLeases

    first, second = RedisLeases(redis, ttl_ms=300), RedisLeases(redis, ttl_ms=300)
    conv = _conv_id()
    held = await first.acquire(conv, wait=1)
    with pytest.raises(ConversationBusy):
        await second.acquire(conv, wait=0.1)
    # Renewed while the turn runs: still held after several TTLs.
    for _ in range(4):
        await asyncio.sleep(0.15)
        await held.confirm()
    # The holder stalls (its renewals stop, as in a paused or dead process): the lease lapses.
    await held.stop_renewing()
    taken = await second.acquire(conv, wait=5)
    assert taken.token > held.token  # the fencing token only grows
    with pytest.raises(LeaseLost):
        await held.confirm()
    await held.release()  # by token: it never deletes its successor's lease
    await taken.confirm()
    await taken.release()
    assert await redis.get("gatebot:turn:" + conv) is None


async def test_turn_locks_on_redis_serialise_two_owners(redis: Any) -> None:
    from bot.store.redislease import RedisLeases

    a, b = TurnLocks(RedisLeases(redis)), TurnLocks(RedisLeases(redis))
    conv, inside, most = _conv_id(), [0], [0]

    async def turn(locks: TurnLocks) -> None:
        async with locks.hold(conv):
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            await asyncio.sleep(0.05)
            await locks.confirm(conv)
            inside[0] -= 1

    await asyncio.gather(*(turn(locks) for locks in (a, b, a, b)))
    assert most[0] == 1


def _record(conv_id: str, seq: int) -> dict[str, Any]:
    record = new_record(conv_id, seq, "hi", "web", "m1")
    record["scope"] = {"verdict": "in", "rule": "x"}
    record["move"] = {"name": "answer", "why": "test", "escalate": False}
    return record


def test_a_turn_that_read_a_stale_turn_count_stores_nothing(database_url: str) -> None:
    import sqlalchemy as sa

    store = Store(database_url)
    store.migrate()
    try:
        conv, _ = store.create_conversation("web")
        m1, _ = store.receive(conv.id, "web", "k1", "hi")
        m2, _ = store.receive(conv.id, "web", "k2", "hi")
        stale = conv.model_copy()
        conv.turn_count, conv.state = 1, {"by": "first"}
        store.complete_turn(conv, m1, _record(conv.id, 1), [], "web")
        # Another process read turn_count 0 too (its lease lapsed): its seq 1 is refused.
        stale.turn_count, stale.state = 1, {"by": "stale"}
        with pytest.raises((sa.exc.IntegrityError, StoreError)):
            store.complete_turn(stale, m2, _record(conv.id, 1), [], "web")
        # A turn count moved under the turn (seq 3 over a count of 1) is refused too.
        stale.turn_count = 3
        with pytest.raises(StoreError, match="elsewhere"):
            store.complete_turn(stale, m2, _record(conv.id, 3), [], "web")
        assert [m.id for m in store.pending()] == [m2.id]
        reloaded = store.get_conversation(conv.id)
        assert reloaded is not None and reloaded.state == {"by": "first"}
    finally:
        store.close()


def test_migrations_from_two_threads_on_an_empty_database(pg_url: str) -> None:
    stores = [Store(pg_url), Store(pg_url)]
    done: list[list[str]] = []
    errors: list[BaseException] = []

    def run(store: Store) -> None:
        try:
            done.append(store.migrate())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    try:
        assert errors == []
        names = [name for name, _ in MIGRATIONS]
        assert sorted(done, key=len) == [[], names]
        assert stores[0].applied_migrations() == names
    finally:
        for s in stores:
            s.close()
