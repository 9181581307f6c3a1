"""A sliding-window limit per key (a conversation): at most ``limit`` events per ``window`` s."""

from __future__ import annotations

import time
from collections import deque


class RateLimiter:
    def __init__(self, limit: int = 20, window: float = 60.0) -> None:
        self.limit, self.window = limit, window
        self._hits: dict[str, deque[float]] = {}
        self._calls = 0

    def allow(self, key: str, now: float | None = None) -> tuple[bool, float]:
        """(allowed, seconds until the next one would be). Counts the event when allowed."""
        now = time.monotonic() if now is None else now
        self._calls += 1
        if self._calls % 1000 == 0:
            self._forget_idle(now)
        hits = self._hits.setdefault(key, deque())
        while hits and now - hits[0] >= self.window:
            hits.popleft()
        if len(hits) >= self.limit:
            return False, self.window - (now - hits[0])
        hits.append(now)
        return True, 0.0

    def _forget_idle(self, now: float) -> None:
        """Drop conversations with no hit inside the window, so the map does not grow forever."""
        for key in [
            k for k, hits in self._hits.items() if not hits or now - hits[-1] >= self.window
        ]:
            del self._hits[key]

    def __len__(self) -> int:
        return len(self._hits)
