"""Limits per key (a conversation, a client IP, a staff token): at most ``limit`` events per
``window`` s.

:class:`RateLimiter` counts in this process (a sliding window over at most ``max_keys`` keys, so
the table stays bounded). :class:`SharedRateLimiter` counts in Redis when ``REDIS_URL`` is set (a
fixed window per key that expires with it), so several processes share one budget, and falls
back to its own :class:`RateLimiter` while Redis does not answer.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import deque
from typing import Any

log = logging.getLogger(__name__)


class RateLimiter:
    def __init__(self, limit: int = 20, window: float = 60.0, max_keys: int = 10_000) -> None:
        self.limit, self.window, self.max_keys = limit, window, max_keys
        self._hits: dict[str, deque[float]] = {}
        self._calls = 0

    def allow(self, key: str, now: float | None = None) -> tuple[bool, float]:
        """(allowed, seconds until the next one would be). Counts the event when allowed.
        A limit of 0 or less is no limit."""
        if self.limit <= 0:
            return True, 0.0
        now = time.monotonic() if now is None else now
        self._calls += 1
        if self._calls % 1000 == 0:
            self._forget_idle(now)
        hits = self._hits.get(key)
        if hits is None:
            self._make_room(now)
            hits = self._hits[key] = deque()
        while hits and now - hits[0] >= self.window:
            hits.popleft()
        if len(hits) >= self.limit:
            return False, self.window - (now - hits[0])
        hits.append(now)
        return True, 0.0

    def _make_room(self, now: float) -> None:
        """Many keys (addresses an attacker rotates through) must not grow memory without end:
        when full, forget the idle ones, then the oldest keys (insertion order)."""
        if len(self._hits) < self.max_keys:
            return
        self._forget_idle(now)
        while len(self._hits) >= self.max_keys:
            del self._hits[next(iter(self._hits))]

    def _forget_idle(self, now: float) -> None:
        """Drop keys with no hit inside the window, so the map does not grow forever."""
        for key in [
            k for k, hits in self._hits.items() if not hits or now - hits[-1] >= self.window
        ]:
            del self._hits[key]

    def __len__(self) -> int:
        return len(self._hits)


# A fixed window per key on the Redis server's clock, counted only when allowed: the count and the
# window's end (the key's expiry) move together, atomically, whichever process asks.
_HIT = """
local n = tonumber(redis.call('get', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return {0, redis.call('pttl', KEYS[1])} end
if redis.call('incr', KEYS[1]) == 1 then redis.call('pexpire', KEYS[1], ARGV[2]) end
return {1, 0}
"""
#: Seconds a process counts in its own memory after Redis failed, before it asks Redis again.
RETRY_REDIS_S = 5.0


class SharedCounts:
    """The Redis every process counts in (``REDIS_URL``), and whether it answers now. Shared by
    the limiters of one process, so an outage is met (and logged) once, not once per limiter."""

    def __init__(self, client: Any, retry_s: float = RETRY_REDIS_S) -> None:
        self.client, self.retry_s = client, retry_s
        self._script = client.register_script(_HIT)
        self._down_until: float | None = None  # set while counting locally

    async def hit(self, key: str, limit: int, window: float) -> tuple[bool, float] | None:
        """(allowed, seconds to wait) from Redis, or None when it cannot say (count locally)."""
        now = time.monotonic()
        if self._down_until is not None and now < self._down_until:
            return None
        try:
            allowed, wait_ms = await self._script(keys=[key], args=[limit, int(window * 1000)])
        except Exception as exc:  # any Redis failure: the local counters hold the line
            if self._down_until is None:
                log.warning(
                    "Redis unavailable for the rate limits (%s); counting in this process "
                    "until it answers",
                    exc.__class__.__name__,
                )
            self._down_until = now + self.retry_s
            return None
        if self._down_until is not None:
            log.warning("Redis answers again: the rate limits are shared again")
            self._down_until = None
        return bool(allowed), max(0, int(wait_ms)) / 1000

    async def close(self) -> None:
        await self.client.aclose()


class SharedRateLimiter:
    """A limit every process shares when ``counts`` is given (Redis), else this process's own
    :class:`RateLimiter`, which also stands in while Redis is down (never unlimited)."""

    def __init__(
        self,
        name: str,
        limit: int,
        window: float,
        counts: SharedCounts | None = None,
        max_keys: int = 10_000,
    ) -> None:
        self.name, self.limit, self.window, self.counts = name, limit, window, counts
        self.local = RateLimiter(limit, window, max_keys)

    async def allow(self, key: str) -> tuple[bool, float]:
        """As :meth:`RateLimiter.allow`, across processes."""
        if self.limit <= 0:
            return True, 0.0
        if self.counts is not None:
            # Hashed: a key may be any text a trusted proxy forwarded, and stays short in Redis.
            digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
            redis_key = f"gatebot:rate:{self.name}:{digest}"
            shared = await self.counts.hit(redis_key, self.limit, self.window)
            if shared is not None:
                return shared
        return self.local.allow(key)
