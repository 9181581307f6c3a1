"""Connection leases: one process of several holds a platform connection (Slack's Socket Mode
websocket, Discord's gateway), and another takes it over when the holder goes.

Where the lease lives: with ``REDIS_URL``, a Redis key set with NX and an expiry, holding this
process's token and renewed every :data:`RENEW_S` seconds, so a holder that dies without a word
loses it within :data:`TTL_S`; without Redis on PostgreSQL, a session advisory lock, which
PostgreSQL drops the moment the holder's connection closes; on SQLite (one process) this process
always holds it. A process without the lease asks again every :data:`RETRY_S` seconds.
:class:`LeasedConnection` (``bot.leasekeeper``) runs an adapter's connect and disconnect by it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
from typing import Any

import sqlalchemy as sa

from bot.config import Settings
from bot.store import Store
from bot.store.engine import make_engine

#: Seconds a Redis lease lives without renewal: how long a dead holder keeps it at most.
TTL_S = 15.0
#: Seconds between renewals; a holder that cannot renew for TTL_S - RENEW_S lets go.
RENEW_S = 5.0
#: Seconds between a waiting process's attempts to take the lease.
RETRY_S = 3.0

# Renew or release only the lease this process holds (the token matches), atomically.
_RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"  # noqa: E501
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"  # noqa: E501


def process_token() -> str:
    """Who holds a lease, as an operator reads it: host, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class Lease:
    """Held always: one process (SQLite, or nothing shared to contend on)."""

    kind = "local"

    def __init__(self, name: str) -> None:
        self.name, self.token = name, process_token()

    async def acquire(self) -> bool:
        """Take the lease if it is free (or already this process's)."""
        return True

    async def renew(self) -> bool:
        """True while still held; False when lost; raises when it cannot tell."""
        return True

    async def release(self) -> None:
        """Let it go (a clean stop), so another process takes it at once."""

    async def holder(self) -> str | None:
        """The holder's token, where the lease's store can say."""
        return self.token

    async def close(self) -> None:
        """Close what the lease connected with (after ``release``)."""


class RedisLease(Lease):
    kind = "redis"

    def __init__(self, name: str, client: Any) -> None:
        super().__init__(name)
        self.client, self.key = client, f"gatebot:lease:{name}"

    async def acquire(self) -> bool:
        ttl = int(TTL_S * 1000)
        if await self.client.set(self.key, self.token, nx=True, px=ttl):
            return True
        return await self.renew()  # ours already (a retry after a lost answer)

    async def renew(self) -> bool:
        return bool(await self.client.eval(_RENEW, 1, self.key, self.token, int(TTL_S * 1000)))

    async def release(self) -> None:
        await self.client.eval(_RELEASE, 1, self.key, self.token)

    async def holder(self) -> str | None:
        value = await self.client.get(self.key)
        return value.decode() if isinstance(value, bytes) else value

    async def close(self) -> None:
        await self.client.aclose()


class PostgresLease(Lease):
    """A session advisory lock on a connection of its own, keyed by the schema and the name, so
    deployments sharing one database in different schemas do not contend."""

    kind = "postgresql"
    _KEY = "hashtext('gatebot-lease'), hashtext(current_schema() || ':' || :name)"

    def __init__(self, name: str, url: str) -> None:
        super().__init__(name)
        # Its own engine (the store's timeouts), so the held connection takes none of the pool.
        self.engine = make_engine(url, pool_size=1, max_overflow=0)
        self._conn: sa.Connection | None = None

    async def acquire(self) -> bool:
        return await asyncio.to_thread(self._acquire)

    def _acquire(self) -> bool:
        if self._conn is None:
            self._conn = self.engine.connect()
            # The session's name is the token, so another process can say who holds the lock.
            name = sa.text("SELECT set_config('application_name', :token, false)")
            self._conn.execute(name, {"token": self.token[:63]})
        query = sa.text(f"SELECT pg_try_advisory_lock({self._KEY})")
        got = bool(self._conn.execute(query, {"name": self.name}).scalar())
        self._conn.commit()
        if not got:
            self._close()  # no connection held by a process that only waits
        return got

    async def renew(self) -> bool:
        return await asyncio.to_thread(self._renew)

    def _renew(self) -> bool:
        if self._conn is None:
            return False
        try:
            self._conn.execute(sa.text("SELECT 1"))
            self._conn.commit()
        except sa.exc.DBAPIError:
            self._close()  # the session is gone, and the lock with it
            return False
        return True

    async def release(self) -> None:
        await asyncio.to_thread(self._close)  # the lock ends with the session

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(sa.exc.DBAPIError):  # already gone: so is the lock
                conn.invalidate()  # closed, not back to the pool: the session (and lock) ends
                conn.close()

    async def holder(self) -> str | None:
        if self._conn is not None:
            return self.token
        return await asyncio.to_thread(self._other_holder)

    def _other_holder(self) -> str | None:
        """The token (session name, at most 63 characters) of the session holding the lock."""
        query = sa.text(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 "
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND l.classid = hashtext('gatebot-lease')::oid "
            "AND l.objid = hashtext(current_schema() || ':' || :name)::oid"
        )
        with self.engine.connect() as conn:
            return conn.execute(query, {"name": self.name}).scalar()

    async def close(self) -> None:
        await asyncio.to_thread(self.engine.dispose)


def connection_lease(name: str, settings: Settings, store: Store) -> Lease:
    """The lease for ``name`` where the processes meet: Redis, else PostgreSQL, else none."""
    from bot.redisconn import redis_client

    client = redis_client(settings)
    if client is not None:
        return RedisLease(name, client)
    if store.dialect == "postgresql":
        return PostgresLease(name, store.url)
    return Lease(name)
