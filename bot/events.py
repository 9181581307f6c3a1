"""Live events per conversation: what a websocket shows as it happens.

In one process an in-memory fan-out; each subscriber gets its own bounded queue, and a subscriber
that stops reading loses old events rather than stalling the turn that publishes. With
``REDIS_URL`` set, ``bot.eventfanout.event_bus`` gives the Redis fan-out instead, so a
widget connected to one process sees what another process publishes; the interface is the same.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

QUEUE_SIZE = 100


class EventBus:
    def __init__(self) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[dict[str, Any]]]] = defaultdict(set)

    async def start(self) -> None:
        """Nothing to connect in one process; the Redis fan-out connects here."""

    async def stop(self) -> None:
        """Nothing to close in one process."""

    def subscribe(self, conversation_id: str) -> asyncio.Queue[dict[str, Any]]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE_SIZE)
        self._subscribers[conversation_id].add(queue)
        return queue

    def unsubscribe(self, conversation_id: str, queue: asyncio.Queue[dict[str, Any]]) -> None:
        subs = self._subscribers.get(conversation_id)
        if subs is not None:
            subs.discard(queue)
            if not subs:
                del self._subscribers[conversation_id]

    def publish(self, conversation_id: str, event: dict[str, Any]) -> None:
        self.deliver(conversation_id, event)

    def deliver(self, conversation_id: str, event: dict[str, Any]) -> None:
        """To this process's subscribers only."""
        for queue in list(self._subscribers.get(conversation_id, ())):
            if queue.full():
                queue.get_nowait()  # drop the oldest: a slow reader must not block a turn
            queue.put_nowait(event)

    def subscriber_count(self) -> int:
        return sum(len(s) for s in self._subscribers.values())
