"""Every turn record the suite produces is checked against docs/turn-record.schema.json.

:func:`install` wraps the agent's delivery of a finished record (``Agent._deliver_record``, which
every stored turn goes through: a normal one, a paused one, one answered while waiting, and a
replay sandbox's) so that each record is checked as the suite runs, as JSON as the store and the
JSONL recorder keep it. The conftest hooks fail the test that produced an invalid record, naming
the path of each violation. The validator is compiled once per session; a record costs one JSON
round trip and one validation (a fraction of a millisecond). Records written by a subprocess (a
``gatebot run`` started by a test) are not seen here.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import Any

from bot.turn import agent
from bot.turn.schema import validator, violations
from bot.turn.turn import TurnRecord

_validator: Any = None
_found: list[str] = []
#: Records checked this session, and the seconds the checks took (the terminal summary's line).
checked = {"records": 0, "seconds": 0.0}
_lock = threading.Lock()


def problems_of(record: Mapping[str, Any]) -> list[str]:
    """Where one record breaks the schema (empty when it conforms)."""
    global _validator
    if _validator is None:
        _validator = validator()
    try:
        as_stored = json.loads(json.dumps(record))
    except (TypeError, ValueError) as exc:
        return [f"(record): not JSON: {exc}"]
    return list(violations(_validator, as_stored))


def install() -> None:
    """Check each record the agent delivers; idempotent."""
    original = agent.Agent._deliver_record
    if getattr(original, "checks_schema", False):
        return

    async def checked_delivery(self: agent.Agent, record: TurnRecord) -> None:
        started = time.perf_counter()
        found = problems_of(record)
        with _lock:
            checked["records"] += 1
            checked["seconds"] += time.perf_counter() - started
        if found:
            where = f"record {record.get('conversation_id')}#{record.get('seq')}"
            with _lock:
                _found.extend(f"{where}: {p}" for p in found)
        await original(self, record)

    checked_delivery.checks_schema = True  # type: ignore[attr-defined]
    agent.Agent._deliver_record = checked_delivery  # type: ignore[method-assign]


def take() -> list[str]:
    """The violations found since the last call (and forget them)."""
    with _lock:
        out = list(_found)
        _found.clear()
    return out
