"""Store calls off the event loop: a bounded pool of database threads, a deadline on every call,
and a fast refusal while the database is known to be down.

Why threads and not SQLAlchemy's asyncio engine: the turn's statements are a few hundred
microseconds of Python each, which an asyncio driver spends on the loop thread anyway (aiosqlite
is itself a thread per connection); what blocked the loop was waiting, for a PostgreSQL commit or
a database that stopped answering. A thread waits without holding the loop, and the store's one
synchronous code path keeps serving the CLI, the flows and the help desks unchanged.

A call that outlives its deadline raises :class:`DatabaseUnavailable` (the web channel answers
503 with ``Retry-After``); the statement it was waiting on is interrupted (SQLite) or its socket
shut (PostgreSQL), so a database that black-holes its connections cannot pin every thread, and
for ``retry_after`` seconds further calls are refused at once instead of queueing behind it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from bot.errors import DatabaseUnavailable
from bot.store import Store

T = TypeVar("T")

#: Errors that mean the database cannot be reached (not a bad statement, not a constraint).
OUTAGE = (OperationalError, InterfaceError, PoolTimeout)


class StoreRunner:
    def __init__(
        self, store: Store, *, deadline: float = 4.0, retry_after: float = 2.0, workers: int = 0
    ) -> None:
        self.store, self.deadline, self.retry_after = store, deadline, retry_after
        # SQLite takes one writer at a time: a second thread would only wait on its lock.
        workers = workers or (1 if store.dialect == "sqlite" else store.pool_size)
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="gatebot-db")
        self._down_until = 0.0
        self.timeouts = 0  #: calls that outlived their deadline, since start

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` (a Store method) on a database thread, within the deadline."""
        if time.monotonic() < self._down_until:
            raise DatabaseUnavailable("the database is not answering", self.retry_after)
        ran_on: list[int] = []

        def work() -> T:
            ran_on.append(threading.get_ident())
            return fn(*args, **kwargs)

        future = asyncio.get_running_loop().run_in_executor(self._pool, work)
        try:
            return await asyncio.wait_for(future, self.deadline)
        except TimeoutError:
            self.timeouts += 1
            self._mark_down()
            if ran_on:
                self.store.interrupt(ran_on[0])
            raise DatabaseUnavailable(
                f"the database did not answer within {self.deadline:g} s", self.retry_after
            ) from None
        except OUTAGE as exc:
            self._mark_down()
            cause = type(getattr(exc, "orig", None) or exc).__name__
            raise DatabaseUnavailable(
                f"the database cannot be reached ({cause})", self.retry_after
            ) from exc

    def _mark_down(self) -> None:
        self._down_until = time.monotonic() + self.retry_after

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
