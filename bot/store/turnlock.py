"""The per-conversation turn lock: turns of one conversation run one at a time, across processes.

An asyncio lock per conversation stands in front (same-process contention costs no round trip);
behind it, when several processes may share the database, a lock that every process sees:

- a Redis lease (``REDIS_URL`` set, :mod:`bot.store.redislease`): SET NX PX with a fencing token,
  renewed while the turn runs, released by token;
- else a PostgreSQL advisory lock (:mod:`bot.store.pglock`), held by the process's lock connection,
  which the server drops, with its locks, when the process dies;
- SQLite: in-process only, since ``gatebot run`` refuses a second process on one SQLite file.

A holder checks its lease just before the turn's commit (:meth:`TurnLocks.confirm`); the commit
itself only lands when the conversation's ``turn_count`` is still the one the turn read, so even a
lease lost after that check cannot store a second turn with the same seq.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator
from typing import Any

from bot.store.leases import WAIT_S, ConversationBusy, Lease, LeaseLost, SharedLocks

__all__ = ["ConversationBusy", "LeaseLost", "TurnLocks", "turn_locks"]


class TurnLocks:
    def __init__(self, shared: SharedLocks | None = None, wait: float = WAIT_S) -> None:
        self.shared, self.wait = shared, wait
        self._local: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._leases: dict[str, Lease] = {}

    @property
    def name(self) -> str:
        return self.shared.name if self.shared else "in-process"

    @contextlib.asynccontextmanager
    async def hold(self, conversation_id: str, wait: float | None = None) -> AsyncIterator[None]:
        """Hold the conversation's turn lock; ``wait`` (default :data:`WAIT_S`) bounds the wait
        for the cross-process part (0: try once)."""
        lock = self._local.get(conversation_id)
        if lock is None:
            lock = self._local[conversation_id] = asyncio.Lock()
        async with lock:
            if self.shared is None:
                yield
                return
            wait = self.wait if wait is None else wait
            lease = await self.shared.acquire(conversation_id, wait)
            self._leases[conversation_id] = lease
            try:
                yield
            finally:
                self._leases.pop(conversation_id, None)
                # Shielded: a cancelled turn still lets the next one in at once.
                await asyncio.shield(lease.release())

    async def confirm(self, conversation_id: str) -> None:
        """Raise :class:`LeaseLost` when this process no longer holds the conversation's lease."""
        lease = self._leases.get(conversation_id)
        if lease is not None:
            await lease.confirm()

    async def aclose(self) -> None:
        if self.shared is not None:
            await self.shared.aclose()


def turn_locks(store: Any, redis: Any = None) -> TurnLocks:
    """The turn locks for this store: a Redis lease when ``redis`` (a client) is given, else a
    PostgreSQL advisory lock on PostgreSQL; SQLite (one process only) keeps them in-process."""
    if store.dialect == "sqlite":
        return TurnLocks()
    if redis is not None:
        from bot.store.redislease import RedisLeases

        return TurnLocks(RedisLeases(redis))
    if store.dialect == "postgresql":
        from bot.store.pglock import AdvisoryLocks

        return TurnLocks(AdvisoryLocks(store.url))
    return TurnLocks()
