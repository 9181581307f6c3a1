"""The inspector's replay: one ``bot.replay.replay`` at a time, in the background.

One at a time across processes too: the job holds a lease (``bot.lease``: a Redis key with
``REDIS_URL``, else a PostgreSQL advisory lock, else this process alone) while it runs, renewed
every :data:`bot.lease.RENEW_S` s, so a second start on another process is refused, naming who
holds it. Each process shows only the replays it ran.

The replay builds a sandbox app (heads loaded, knowledge indexed: seconds of CPU), so it runs on
a thread with an event loop of its own and the web server keeps answering while it works. The
page polls :meth:`ReplayJob.status`. Cancelling (the server stopping) takes effect between two
conversations.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.config import Settings
from bot.lease import RENEW_S, Lease, process_token
from bot.replay import LoggedConversation, ReplayReport, replay

log = logging.getLogger(__name__)


class ReplayBusy(Exception):
    """A replay is already running, here or in another process."""


class ReplayCancelled(Exception):
    """The server is stopping; the replay stopped between two conversations."""


@dataclass
class ReplayJob:
    state: str = "idle"  # idle | running | done | failed
    pack: str = ""
    source: str = ""
    staff: str = ""
    total: int = 0
    done: int = 0
    error: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    report: ReplayReport | None = None
    #: Makes the lease a replay holds while it runs (``ChannelHost.lease``); None: this process.
    lease_for: Callable[[str], Lease] = Lease
    _task: asyncio.Task[None] | None = field(default=None, repr=False)
    _cancelled: bool = field(default=False, repr=False)

    @property
    def running(self) -> bool:
        return self.state == "running"

    async def start(
        self,
        conversations: list[LoggedConversation],
        pack: Path,
        settings: Settings,
        source: str,
        staff: str,
    ) -> None:
        """Replay ``conversations`` through ``pack`` in the background; :class:`ReplayBusy` while
        one runs."""
        if self.running:
            raise ReplayBusy(f"a replay started by {self.staff} is still running")
        lease = await self._take_lease(staff)
        self.state, self.pack, self.source, self.staff = "running", str(pack), source, staff
        self.total, self.done, self.error, self.report = len(conversations), 0, None, None
        self.started_at, self.finished_at, self._cancelled = datetime.now(UTC), None, False
        work = self._run(conversations, pack, settings, source, lease)
        self._task = asyncio.create_task(work)

    async def _take_lease(self, staff: str) -> Lease:
        lease = self.lease_for("inspector-replay")
        lease.token = f"{staff[:20]} on {process_token()}"  # what the refused process shows
        try:
            if await lease.acquire():
                return lease
            holder = await lease.holder()
        except Exception as exc:  # the lease's store is down: refuse rather than run twice
            await _closed(lease)
            why = exc.__class__.__name__
            raise ReplayBusy(f"cannot tell whether another replay runs ({why})") from None
        await _closed(lease)
        raise ReplayBusy(f"a replay started by {holder or 'another process'} is still running")

    async def _run(
        self,
        conversations: list[LoggedConversation],
        pack: Path,
        settings: Settings,
        source: str,
        lease: Lease,
    ) -> None:
        stop = asyncio.Event()
        renewing = asyncio.create_task(_renew(lease, stop))
        try:
            work = replay(conversations, pack, settings, source, self._counted)
            self.report = await asyncio.to_thread(asyncio.run, work)
            self.state = "done"
        except Exception as exc:  # any failure is shown on the page, never swallowed
            log.warning("inspector replay failed: %s", exc.__class__.__name__, exc_info=True)
            self.state, self.error = "failed", f"{exc.__class__.__name__}: {exc}"[:2000]
        finally:
            self.finished_at = datetime.now(UTC)
            # Stopped, never cancelled: a command cancelled mid-flight can leave an unread reply
            # on the connection that the release then reads.
            stop.set()
            await renewing
            with contextlib.suppress(Exception):  # lost with its store: it expires on its own
                await lease.release()
            await _closed(lease)

    def _counted(self, conversations: list[LoggedConversation]) -> Iterator[LoggedConversation]:
        for conv in conversations:
            if self._cancelled:
                raise ReplayCancelled("the server stopped during the replay")
            yield conv
            self.done += 1

    async def cancel(self) -> None:
        """Stop between two conversations and wait for the thread to end."""
        self._cancelled = True
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "state": self.state,
            "pack": self.pack or None,
            "source": self.source or None,
            "staff": self.staff or None,
            "conversations": self.total,
            "done": self.done,
            "error": self.error,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }
        if self.report is not None:
            out["totals"] = self.report.totals()
        return out


async def _renew(lease: Lease, stop: asyncio.Event) -> None:
    """Keep the lease while the replay runs, until ``stop``; a renewal that fails is logged, not
    fatal (the replay finishes; at worst another process may start one meanwhile)."""
    while True:
        try:
            await asyncio.wait_for(stop.wait(), RENEW_S)
            return
        except TimeoutError:
            pass
        try:
            held = await lease.renew()
        except Exception as exc:
            held = False
            log.warning("inspector replay lease: renewal failed (%s)", exc.__class__.__name__)
        if not held:
            log.warning("inspector replay lease lost while the replay runs")


async def _closed(lease: Lease) -> None:
    with contextlib.suppress(Exception):
        await lease.close()
