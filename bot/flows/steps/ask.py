"""An ask step: the value a slot holds, or a question for it (the Actor words the question)."""

from __future__ import annotations

from bot.flows.model import Step
from bot.flows.outcome import StepResult, handoff
from bot.flows.steps.base import StepTurn
from bot.turn.decide import Decision, value_check


def run(t: StepTurn, step: Step) -> StepResult:
    slot = step.slot or ""
    known = t.state["values"].get(slot)
    if known is not None:
        return StepResult(output={slot: known["value"]})
    check = t.state.get("check")
    rule = f"flow {t.flow.name}: step {step.id} needs {slot}"
    if check:  # a value waiting for the customer's yes comes first
        return StepResult(decision=value_check(check).choose(), note={"slot": slot})
    misses = t.state.get("slot_misses", {}).get(slot, 0)
    if misses >= 2:
        return StepResult(decision=handoff(f"{rule}; still missing after asking twice"))
    decision = Decision(
        ["ask", "handoff"], rule, slot=slot, template="ask_again" if misses == 1 else "ask"
    ).choose()
    decision.why = f"flow {t.flow.name} step {step.id}: ask for {slot}"
    decision.wording = (
        step.question or None
    )  # the step's own question, in the conversation's language
    return StepResult(decision=decision, note={"slot": slot})
