"""What the turn locks' backends share (:mod:`bot.store.turnlock`): their errors, their
protocol and the wait between tries."""

from __future__ import annotations

import asyncio
from typing import Protocol

from bot.errors import Unavailable

#: Seconds a turn waits for another turn of its conversation (on another process) to finish.
WAIT_S = 60.0


class ConversationBusy(Unavailable):
    """Another turn of this conversation held the lock for longer than the wait: answer 503."""


class LeaseLost(Unavailable):
    """The turn's cross-process lease lapsed before its commit: nothing is stored, the client
    sends the message again (and gets the stored answer if another process finished it)."""


class Lease(Protocol):
    async def confirm(self) -> None:
        """Raise :class:`LeaseLost` unless this lease is still held."""

    async def release(self) -> None: ...


class SharedLocks(Protocol):
    """A lock that every process sees. ``acquire`` waits at most ``wait`` seconds and raises
    :class:`ConversationBusy` after; it never blocks the event loop."""

    name: str

    async def acquire(self, conversation_id: str, wait: float) -> Lease: ...

    async def aclose(self) -> None: ...


async def backoff(deadline: float, step: float) -> float:
    """Sleep before the next try (doubling up to 0.25 s); raise :class:`ConversationBusy` once
    ``deadline`` (loop time) has passed. Returns the next step."""
    loop = asyncio.get_running_loop()
    left = deadline - loop.time()
    if left <= 0:
        raise ConversationBusy("another turn of this conversation is still running", 1.0)
    await asyncio.sleep(min(step, left))
    return min(step * 2, 0.25)
