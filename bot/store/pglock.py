"""Turn locks as PostgreSQL advisory locks (see :mod:`bot.store.turnlock`).

One connection per process holds every lock the process has (session-level advisory locks stack
on one connection), used by one thread of its own, so a wait never blocks the event loop nor takes
a database thread or a pooled connection from the turns. A wait is a try, then a short sleep on
the loop, then another try: no server-side wait that a deadline would have to interrupt. When the
process dies its connection closes and the server releases its locks: another process's delivery
of the same message then runs the turn (recovery).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.pool import NullPool

from bot.errors import DatabaseUnavailable
from bot.store.engine import make_engine
from bot.store.leases import LeaseLost, backoff

T = TypeVar("T")
#: Seconds one lock statement may take (a try, an unlock, a check) before the turn gives up.
CALL_S = 5.0

_HELD = (
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
    " AND pid = pg_backend_pid() AND classid = %s AND objid = %s AND objsubid = 1"
)


def lock_key(name: str) -> int:
    """A signed 64-bit advisory lock key for ``name`` (a collision only serialises two turns)."""
    digest = hashlib.blake2b(f"gatebot:{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass
class AdvisoryLease:
    owner: AdvisoryLocks
    key: int
    generation: int  #: which lock connection took it: a new one holds none of the old's locks

    async def confirm(self) -> None:
        if not await self.owner.call(self.owner.held, self):
            raise LeaseLost("the conversation's lock was lost (the lock connection dropped)", 1.0)

    async def release(self) -> None:
        await self.owner.call(self.owner.unlock, self)


class AdvisoryLocks:
    name = "postgresql advisory lock"

    def __init__(self, url: str) -> None:
        self._engine = make_engine(url, poolclass=NullPool)
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="gatebot-turnlock")
        self._conn: Any = None
        self._generation = 0

    async def acquire(self, conversation_id: str, wait: float) -> AdvisoryLease:
        key = lock_key(f"turn:{conversation_id}")
        deadline, step = asyncio.get_running_loop().time() + wait, 0.01
        while True:
            generation = await self.call(self.try_lock, key)
            if generation is not None:
                return AdvisoryLease(self, key, generation)
            step = await backoff(deadline, step)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        try:
            return await asyncio.wait_for(loop.run_in_executor(self._thread, fn, *args), CALL_S)
        except TimeoutError:
            # The stuck call may still take a lock no lease records: drop the connection after
            # it, which releases every lock it holds (their turns' confirm then fails).
            self._thread.submit(self._drop)
            raise DatabaseUnavailable("the turn lock did not answer in time", 1.0) from None

    # -- on the lock thread ----------------------------------------------------------------------

    def try_lock(self, key: int) -> int | None:
        """The connection's generation when the lock is now held, None when another has it."""
        got = self._query("SELECT pg_try_advisory_lock(%s)", (key,))
        return self._generation if got else None

    def held(self, lease: AdvisoryLease) -> bool:
        if lease.generation != self._generation or self._conn is None:
            return False
        unsigned = lease.key & 0xFFFFFFFFFFFFFFFF
        try:
            return bool(self._query(_HELD, (unsigned >> 32, unsigned & 0xFFFFFFFF)))
        except DatabaseUnavailable:
            return False  # the connection broke: its locks went with it

    def unlock(self, lease: AdvisoryLease) -> None:
        if lease.generation == self._generation and self._conn is not None:
            # Unreachable: the connection is gone, and the lock with it.
            with contextlib.suppress(DatabaseUnavailable):
                self._query("SELECT pg_advisory_unlock(%s)", (lease.key,))

    def _query(self, sql: str, params: tuple[int, ...]) -> Any:
        try:
            if self._conn is None:
                self._conn = self._engine.raw_connection()
                self._conn.driver_connection.autocommit = True
                self._generation += 1
            cur = self._conn.cursor()
            try:
                cur.execute(sql, params)
                return cur.fetchone()[0]
            finally:
                cur.close()
        except Exception as exc:
            self._drop()
            cause = type(exc).__name__
            raise DatabaseUnavailable(f"the turn lock's database is unreachable ({cause})") from exc

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # closed already: nothing more to drop
                conn.invalidate()

    async def aclose(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._thread, self._drop)
        self._thread.shutdown(wait=False)
        self._engine.dispose()
