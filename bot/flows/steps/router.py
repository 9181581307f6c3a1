"""A router step: the first route whose declared condition holds, else the default. Skipping the
branches not taken is the engine's (it walks the schedule)."""

from __future__ import annotations

from bot.flows.model import Step
from bot.flows.outcome import StepResult
from bot.flows.state import holds
from bot.flows.steps.base import StepHost, StepTurn
from bot.turn import gates


def run(host: StepHost, t: StepTurn, step: Step) -> StepResult:
    ctx = t.context()
    chosen, why = step.default, "default"
    for k, route in enumerate(step.routes):
        if holds(route.when, ctx):
            chosen, why = route.to, f"routes[{k}]: {route.when.path}"
            break
    # A declared condition is certain; it still passes the policy gate like any reading.
    t.record["reads"].append(
        gates.read(
            f"router:{step.id}", "declared", chosen, 1.0, "policy", host.pack.gates["policy"]
        )
    )
    return StepResult(output={"route": chosen, "why": why}, note={"route": chosen})
