"""A platform connection run by a lease (``bot.lease``): connected only in the process holding
it, renewed while connected, let go on a clean stop, and taken over by a waiting process when
the holder goes. Channel adapters get one from ``ChannelHost.leased_connection``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from bot.lease import RENEW_S, RETRY_S, TTL_S, Lease
from bot.metrics import Metrics

log = logging.getLogger(__name__)

Step = Callable[[], Awaitable[None]]
GAUGE = "gatebot_connection_lease_held"


class LeasedConnection:
    def __init__(
        self, lease: Lease, connect: Step, disconnect: Step, metrics: Metrics | None = None
    ) -> None:
        self.lease, self._connect, self._disconnect = lease, connect, disconnect
        self._metrics = metrics
        self.held = False
        self._task: asyncio.Task[None] | None = None
        self._renewed = 0.0
        if metrics is not None:
            metrics.describe(GAUGE, "gauge", "1 in the process holding a connection's lease.")
        self._set_held(False)

    @property
    def name(self) -> str:
        return self.lease.name

    async def start(self) -> None:
        """Connect now if the lease is free (a failure to connect is raised, as without a
        lease); otherwise say who holds it and keep asking in the background."""
        if await self._try_acquire():
            try:
                await self._connect()
            except BaseException:
                await self._let_go()
                await _quietly(self.lease.close())
                raise
            self._set_held(True)
        else:
            holder = await _quietly(self.lease.holder())
            log.info(
                "%s: another process holds the connection (%s, %s lease); this one takes over "
                "when it goes",
                self.name,
                holder or "unknown",
                self.lease.kind,
            )
        self._task = asyncio.create_task(self._keep(), name=f"lease: {self.name}")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.held:
            self._set_held(False)
            try:
                await self._disconnect()
            finally:
                await self._let_go()
        await _quietly(self.lease.close())

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(RENEW_S if self.held else RETRY_S)
            if self.held:
                await self._renew()
            elif await self._try_acquire():
                await self._take_over()

    async def _take_over(self) -> None:
        try:
            await self._connect()
        except Exception:
            log.exception("%s: holding the lease but could not connect; letting it go", self.name)
            await self._let_go()
            return
        self._set_held(True)
        log.warning("%s: took over the connection (%s)", self.name, self.lease.token)

    async def _renew(self) -> None:
        try:
            still = await self.lease.renew()
        except Exception as exc:  # cannot tell: keep it until another could have taken it
            log.warning("%s: could not renew the lease (%s)", self.name, type(exc).__name__)
            if time.monotonic() - self._renewed < TTL_S - RENEW_S:
                return
            still = False
        if still:
            self._renewed = time.monotonic()
            return
        log.warning("%s: lost the lease; disconnecting for the process that holds it", self.name)
        self._set_held(False)
        try:
            await self._disconnect()
        except Exception:
            log.exception("%s: did not disconnect cleanly", self.name)

    async def _try_acquire(self) -> bool:
        try:
            got = await self.lease.acquire()
        except Exception as exc:  # its store is out of reach: nobody can take it meanwhile
            log.warning("%s: cannot reach the lease (%s)", self.name, type(exc).__name__)
            return False
        if got:
            self._renewed = time.monotonic()
        return got

    async def _let_go(self) -> None:
        await _quietly(self.lease.release())

    def _set_held(self, held: bool) -> None:
        self.held = held
        if held:
            log.info("%s: this process holds the connection (%s)", self.name, self.lease.token)
        if self._metrics is not None:
            self._metrics.set(GAUGE, 1 if held else 0, connection=self.name)


async def _quietly(work: Awaitable[object]) -> object | None:
    """A lease call whose failure changes nothing (releasing, closing, naming the holder)."""
    try:
        return await work
    except Exception as exc:
        log.debug("lease call failed: %s", exc)
        return None
