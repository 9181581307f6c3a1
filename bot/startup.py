"""Start-up timing: one log line per component with the seconds it took, so a slow start says
where its time went (``gatebot -v run``; bench/startup.py measures the whole start)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger("bot.startup")


@contextmanager
def timed(component: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    log.info("start: %s in %.2fs", component, time.perf_counter() - started)
