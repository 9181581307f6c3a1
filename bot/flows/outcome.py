"""What one step came to, and the two decisions most steps end a turn with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.turn.decide import Decision


@dataclass
class StepResult:
    """``output``: the step completed with it; ``decision``: the step needs the customer (or a
    person) first. ``note`` goes into the turn record's flow entry for the step."""

    output: dict[str, Any] | None = None
    decision: Decision | None = None
    note: dict[str, Any] = field(default_factory=dict)
    model: str | None = None


def handoff(rule: str) -> Decision:
    return Decision(["handoff"], rule, move="handoff", why=rule, escalate=True)


def answer(flow: str, step_id: str, step_type: str) -> Decision:
    return Decision(
        ["answer", "handoff"],
        f"flow {flow}: step {step_id}",
        move="answer",
        why=f"flow {flow} step {step_id} ({step_type})",
    )
