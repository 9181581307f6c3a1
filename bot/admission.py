"""How many turns this process runs at once. Beyond the limit a channel that can ask its client to
come back (the web API: 503 with Retry-After) sheds the turn at once, before any work, so the turns
accepted keep their latency instead of every turn queueing behind an ever longer line.

The limit is the queue: a turn counts from its admission to its answer, waiting for the CPU, a
conversation's lock or the database included. ``GATEBOT_MAX_TURNS`` sets it (0: no limit).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from bot.errors import Overloaded
from bot.metrics import Metrics

IN_FLIGHT = "gatebot_turns_in_flight"
SHED = "gatebot_turns_shed_total"


class TurnAdmission:
    def __init__(self, limit: int, metrics: Metrics, retry_after: float = 1.0) -> None:
        self.limit, self.metrics, self.retry_after = limit, metrics, retry_after
        self.in_flight = 0
        self.shed = 0
        metrics.describe(IN_FLIGHT, "gauge", "Turns admitted and not yet answered (the queue).")
        metrics.describe("gatebot_turns_in_flight_limit", "gauge", "GATEBOT_MAX_TURNS (0: none).")
        metrics.describe(SHED, "counter", "Turns refused with 503 because the queue was full.")
        metrics.set("gatebot_turns_in_flight_limit", limit)
        metrics.set(IN_FLIGHT, 0)
        metrics.inc(SHED, 0)  # shown from the start, so a rate over it needs no first shed

    @property
    def full(self) -> bool:
        return bool(self.limit) and self.in_flight >= self.limit

    def refuse(self) -> Overloaded:
        """Count one shed turn; the error to raise for it."""
        self.shed += 1
        self.metrics.inc(SHED)
        return Overloaded(
            f"{self.in_flight} turns are already running here; try again shortly",
            self.retry_after,
        )

    @contextmanager
    def slot(self, *, shed: bool) -> Iterator[None]:
        """Hold one place in the queue for a turn. With ``shed``, a full queue raises
        :class:`Overloaded` instead (the turn never starts); without, the turn still counts."""
        if shed and self.full:
            raise self.refuse()
        self.in_flight += 1
        self.metrics.set(IN_FLIGHT, self.in_flight)
        try:
            yield
        finally:
            self.in_flight -= 1
            self.metrics.set(IN_FLIGHT, self.in_flight)
