"""A sliding-window limit per key (a conversation, a client IP, a staff token): at most ``limit``
events per ``window`` s, over at most ``max_keys`` keys so the table stays bounded."""

from __future__ import annotations

import time
from collections import deque


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
