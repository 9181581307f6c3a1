"""A tool step: the step's tool called with its declared arguments, its result filling values
(marked as from the system) and checked by a contract when there is one. A ``changes`` tool is
read back first and made only on a confident yes (:mod:`bot.flows.steps.change`); under
``dry-run`` it cannot be reached at all, and on a fork it runs dry unless an operator allowed
side effects."""

from __future__ import annotations

from typing import Any

from bot.extend.tool import ToolOutcome
from bot.flows import contracts
from bot.flows.model import Step
from bot.flows.outcome import StepResult, handoff
from bot.flows.state import render_arguments
from bot.flows.steps import emailcode
from bot.flows.steps.base import DRY_RUN_REMOVED, StepHost, StepTurn
from bot.flows.steps.change import ChangeTurn, ReadBack
from bot.flows.steps.refusal import explainable, why
from bot.turn.act import text_reply
from bot.turn.decide import Decision


async def run(host: StepHost, t: StepTurn, step: Step) -> StepResult:
    name = step.tools[0]
    removed = host.reachable(step)[1]
    ctx = t.context()
    if name in removed:
        t.record["tools"].append(
            {"tool": name, "event": "refused", "detail": {"reason": DRY_RUN_REMOVED}}
        )
        return StepResult(
            output={"status": "refused", "reason": DRY_RUN_REMOVED},
            note={"tools_removed": removed},
        )
    tool = host.tools.get(name) if host.tools else None
    if tool is not None and tool.changes:
        return await _change(host, t, step, name, ctx)
    # A value the run does not hold is left out, not sent empty: an optional parameter (an
    # email a verified customer never typed) is then the API's to do without.
    args = {k: v for k, v in render_arguments(step.arguments, ctx).items() if v is not None}
    outcome = await host.runner(t).call(name, args, host.tool_context(t), events=t.record["tools"])
    if not outcome.ok:
        return StepResult(
            decision=handoff(
                f"flow {t.flow.name} step {step.id}: {name} {outcome.status}: {outcome.reason}"
            )
        )
    fill(t, step, outcome.result)
    return contracted(host, t, step, {"status": outcome.status, "result": outcome.result})


def fill(t: StepTurn, step: Step, result: dict[str, Any] | None) -> None:
    """Values a tool's result provides, marked as coming from the system."""
    for key, slot in step.fills.items():
        if isinstance(result, dict) and result.get(key) is not None:
            value = result[key]
            t.state["values"][slot] = {"value": value, "source": "system", "seq": t.seq}
            t.record["values"].append(
                {"slot": slot, "value": value, "source": "system", "outcome": "act", "rejected": []}
            )


def contracted(host: StepHost, t: StepTurn, step: Step, output: dict[str, Any]) -> StepResult:
    """A tool's output, checked by the step's contract when it has one (one attempt: a tool is
    not asked twice)."""
    contract = step.contract or (contracts.DEFAULT_TOOL if "test-driven" in step.mods else None)
    if contract is None:
        return StepResult(output=output)
    problems = contracts.check(contract, output, host.resolvable(t))
    note = {
        "contract": {
            "passed": not problems,
            "attempts": [{"attempt": 1, "passed": not problems, "problems": problems}],
        }
    }
    if problems:
        why = f"flow {t.flow.name} step {step.id}: contract failed: " + "; ".join(problems)
        return StepResult(decision=handoff(why), note=note)
    return StepResult(output=output, note=note)


async def _change(
    host: StepHost, t: StepTurn, step: Step, name: str, ctx: dict[str, Any]
) -> StepResult:
    """A ``changes`` tool: read back, then made only on a confident yes (after a one-time code
    by email, when what it changes is owned only by an email and codes are on)."""
    coded = await emailcode.gate(host, t, step, host.tools.get(name) if host.tools else None)
    if coded is not None:
        return coded

    async def make(args: dict[str, Any]) -> StepResult:
        dry = not t.progress.get("allow_side_effects", True)
        outcome = await host.runner(t).call(
            name,
            args,
            host.tool_context(t),
            confirmed=True,
            dry_run=dry,
            events=t.record["tools"],
        )
        if explainable(outcome):
            return _refused(host, t, step, outcome, args)
        if outcome.status not in ("ok", "dry_run"):
            return StepResult(
                decision=handoff(
                    f"flow {t.flow.name} step {step.id}: {name} {outcome.status}: "
                    f"{outcome.reason}; nothing was confirmed to the customer"
                )
            )
        fill(t, step, outcome.result)
        return contracted(
            host, t, step, {"status": outcome.status, "result": outcome.result, "arguments": args}
        )

    turn = ChangeTurn(
        t.flow.name,
        step,
        host.pack,
        t.progress,
        t.state["values"],
        t.text,
        t.seq,
        t.record,
        lambda text: t.replies.append(text_reply(text)),
        make,
    )
    return await ReadBack(turn).run(ctx)


def _refused(
    host: StepHost, t: StepTurn, step: Step, outcome: ToolOutcome, args: dict[str, Any]
) -> StepResult:
    """A change the tool refused for a declared limit, or the service turned down: the customer
    is told why and that nothing changed, and the flow ends there (its later steps, a "done"
    reply among them, never run), instead of a hand-off."""
    tool = host.tools.get(step.tools[0]) if host.tools else None
    reason = why(outcome, tool.schema if tool else None, args)
    t.replies.append(text_reply(f"I couldn't make that change: {reason}. Nothing was changed."))
    rule = f"flow {t.flow.name} step {step.id}: {step.tools[0]} {outcome.status}: {reason}"
    decision = Decision(["answer", "handoff"], rule, move="answer", why=rule)
    output = {"status": outcome.status, "reason": reason, "arguments": args, "ends_flow": True}
    return StepResult(output=output, decision=decision, note={"refused": reason})
