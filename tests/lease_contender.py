"""One process contending for a connection lease, for tests/test_lease.py: prints ``HOLDING``
when it connects and ``LOST`` when it disconnects, then runs until it is killed.

    python -m tests.lease_contender NAME   (REDIS_URL or DATABASE_URL says where the lease is)
"""

from __future__ import annotations

import asyncio
import os
import sys

from bot.config import Settings
from bot.lease import connection_lease
from bot.leasekeeper import LeasedConnection
from bot.store import Store


async def main(name: str) -> None:
    settings = Settings(redis_url=os.environ.get("REDIS_URL") or None)
    store = Store(os.environ.get("DATABASE_URL", "sqlite://"))

    async def connect() -> None:
        print("HOLDING", os.getpid(), flush=True)

    async def disconnect() -> None:
        print("LOST", os.getpid(), flush=True)

    keeper = LeasedConnection(connection_lease(name, settings, store), connect, disconnect)
    await keeper.start()
    print("STARTED", os.getpid(), flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await keeper.stop()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
