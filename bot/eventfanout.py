"""Live events across processes through Redis pub/sub (``REDIS_URL``).

Every event is delivered to this process's websockets at once, as in one process, and also
published on one Redis channel as JSON (``{"origin", "conversation", "event"}``). Each process
subscribes to that channel and delivers what other processes published; its own events carry
its origin and are skipped, so a websocket sees each event exactly once.

Redis is never on a turn's path: ``publish`` only queues the message for a background sender.
When Redis is out of reach the events reach this process's websockets only (said once in the
log), and the receiver reconnects with a bounded backoff; what was published meanwhile is not
replayed to the other processes (the stored transcript has it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from typing import Any

from bot.config import Settings
from bot.events import EventBus
from bot.metrics import Metrics
from bot.redisconn import redis_client

log = logging.getLogger(__name__)

CHANNEL = "gatebot:events"
#: Messages waiting for the sender; over it the oldest is dropped (a stalled Redis, not a turn).
OUTBOX_SIZE = 1000
#: Reconnect delays: doubling from the first to the last, then the last until Redis answers.
BACKOFF_S = (0.2, 5.0)
#: How long ``start`` waits for the first subscription (or its refusal) before carrying on.
START_WAIT_S = 5.0


class RedisEventBus(EventBus):
    def __init__(self, client: Any, channel: str = CHANNEL, metrics: Metrics | None = None):
        super().__init__()
        self._client, self._channel, self._metrics = client, channel, metrics
        #: This process's mark on what it publishes, so it skips its own messages.
        self.origin = secrets.token_hex(8)
        self._outbox: asyncio.Queue[str] = asyncio.Queue(OUTBOX_SIZE)
        self._tasks: list[asyncio.Task[None]] = []
        self._first_try = asyncio.Event()  # subscribed, or refused once
        #: Set by ``stop``: the receiver ends at its next read even if a cancel was swallowed.
        self._stopping = False
        self.connected = False
        self._reported_down = False
        if metrics is not None:
            metrics.describe(
                "gatebot_events_redis_connected",
                "gauge",
                "1 while live events are shared with other processes through Redis.",
            )
            metrics.set("gatebot_events_redis_connected", 0)

    async def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._receive_forever(), name="events-redis-receive"),
            asyncio.create_task(self._send_forever(), name="events-redis-send"),
        ]
        # Subscribed before the process serves, so no other process's event is missed; a Redis
        # that is down does not keep it from serving (the receiver keeps reconnecting).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._first_try.wait(), START_WAIT_S)

    async def stop(self) -> None:
        self._stopping = True
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._set_connected(False)
        with contextlib.suppress(Exception):
            await self._client.aclose()

    def publish(self, conversation_id: str, event: dict[str, Any]) -> None:
        self.deliver(conversation_id, event)  # here, once: the Redis copy comes back skipped
        if not self.connected:
            return  # no Redis now: other processes miss this one (the log said so)
        try:
            message = json.dumps(
                {"origin": self.origin, "conversation": conversation_id, "event": event}
            )
        except (TypeError, ValueError) as exc:
            log.warning("event for %s not shared: not JSON (%s)", conversation_id, exc)
            return
        if self._outbox.full():
            self._outbox.get_nowait()
        self._outbox.put_nowait(message)

    def receive(self, data: bytes | str) -> None:
        """One message from the channel: delivered here unless this process sent it."""
        try:
            message = json.loads(data)
            origin, conv, event = message["origin"], message["conversation"], message["event"]
        except (ValueError, TypeError, KeyError) as exc:
            log.warning("ignored a malformed message on %s (%s)", self._channel, exc)
            return
        if origin != self.origin and isinstance(conv, str) and isinstance(event, dict):
            self.deliver(conv, event)

    async def _send_forever(self) -> None:
        while True:
            message = await self._outbox.get()
            try:
                await self._client.publish(self._channel, message)
            except Exception as exc:  # any Redis or socket error: dropped, not retried
                self._report(exc)
                while not self._outbox.empty():  # each would wait out the same timeout
                    self._outbox.get_nowait()
            else:
                self._report(None)

    async def _receive_forever(self) -> None:
        delay = BACKOFF_S[0]
        while not self._stopping:
            pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self._channel)
                self._set_connected(True)
                delay = BACKOFF_S[0]
                # Not ``while True``: a cancel that lands as the read's own 1 s timeout expires
                # can come back as that timeout (Python 3.11's asyncio.timeout), and the read
                # returns None as if nothing happened; the flag still ends the loop.
                while not self._stopping:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None and message.get("type") == "message":
                        self.receive(message["data"])
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis went away: reconnect after a bounded wait
                self._set_connected(False, exc)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_S[1])

    def _set_connected(self, connected: bool, error: BaseException | None = None) -> None:
        """The receiver's state: subscribed or not (``publish`` shares only while subscribed)."""
        self._first_try.set()
        self.connected = connected
        if self._metrics is not None:
            self._metrics.set("gatebot_events_redis_connected", 1 if connected else 0)
        if connected or error is not None:
            self._report(error)

    def _report(self, error: BaseException | None) -> None:
        """Say once that Redis is out of reach, and once that it is back."""
        if error is None:
            if self._reported_down:
                log.warning("redis events: Redis answers again; events are shared again")
            self._reported_down = False
        elif not self._reported_down:
            self._reported_down = True  # once per outage, not once per retry
            log.warning(
                "redis events: Redis unreachable (%s: %s); events reach this process's "
                "websockets only until it answers again",
                type(error).__name__,
                error,
            )


def event_bus(settings: Settings, metrics: Metrics | None = None) -> EventBus:
    """The Redis fan-out when ``REDIS_URL`` is set, else the in-memory bus."""
    client = redis_client(settings)
    return EventBus() if client is None else RedisEventBus(client, metrics=metrics)
