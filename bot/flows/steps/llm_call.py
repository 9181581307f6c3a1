"""An llm_call step: a model call whose output joins the run's state. The model may ask for
tools, only those the step can reach (``dry-run`` takes the changes tools away, and a change is
never confirmed from a model's text); a contract, when there is one, decides whether the output
is done and bounds the retries."""

from __future__ import annotations

import json
from typing import Any

from bot.errors import ProviderError
from bot.extend.provider import Prompt, call
from bot.flows import contracts
from bot.flows.model import Step
from bot.flows.outcome import StepResult, handoff
from bot.flows.state import render
from bot.flows.steps.base import DRY_RUN_REMOVED, StepHost, StepTurn


async def run(host: StepHost, t: StepTurn, step: Step) -> StepResult:
    ctx = t.context()
    reachable, removed = host.reachable(step)
    contract = step.contract or (contracts.DEFAULT if "test-driven" in step.mods else None)
    attempts: list[dict[str, Any]] = []
    feedback = ""
    output: dict[str, Any] = {}
    for attempt in range(1, 2 + (contract.retries if contract else 0)):
        prompt = _prompt(host, t, step, ctx, reachable, feedback, attempt)
        try:
            text = (await call(host.provider_for(step), prompt, t.calls)).text
        except ProviderError as exc:
            return StepResult(
                decision=handoff(f"model provider failed: {exc}"), note={"attempts": attempts}
            )
        output = parse_output(text, step.output or "text")
        output["tool_results"] = await _requested_tools(
            host, t, output.pop("tool_calls", []), reachable, removed
        )
        problems = contracts.check(contract, output, host.resolvable(t)) if contract else []
        attempts.append({"attempt": attempt, "passed": not problems, "problems": problems})
        if not problems:
            break
        feedback = contracts.feedback(problems)
    note: dict[str, Any] = {"tools_removed": removed}
    if contract:
        note["contract"] = {"passed": not attempts[-1]["problems"], "attempts": attempts}
        if attempts[-1]["problems"]:
            why = (
                f"flow {t.flow.name} step {step.id}: contract still failing after "
                f"{len(attempts)} attempt(s)"
            )
            return StepResult(decision=handoff(why), note=note)
    return StepResult(output=output, note=note, model=host.provider_for(step).model)


def _prompt(
    host: StepHost,
    t: StepTurn,
    step: Step,
    ctx: dict[str, Any],
    reachable: list[str],
    feedback: str,
    attempt: int,
) -> Prompt:
    system = host.system(step) + "\n\nState:\n" + json.dumps(ctx, sort_keys=True)
    if reachable:
        system += "\n\nTools you may ask for: " + ", ".join(reachable)
    user = render(step.prompt, ctx) + ("\n\n" + feedback if feedback else "")
    return Prompt(
        "flow",
        system,
        [{"role": "user", "content": user}],
        {
            "flow": t.flow.name,
            "step": step.id,
            "tools": reachable,
            "feedback": feedback,
            "attempt": attempt,
        },
    )


async def _requested_tools(
    host: StepHost, t: StepTurn, requested: Any, reachable: list[str], removed: list[str]
) -> list[dict[str, Any]]:
    """Tool calls the model asked for: refused unless the step can reach the tool; a change is
    never confirmed from a model's text, so the runner refuses it too."""
    out: list[dict[str, Any]] = []
    for req in requested if isinstance(requested, list) else []:
        name = str(req.get("tool", "")) if isinstance(req, dict) else ""
        args = req.get("arguments", {}) if isinstance(req, dict) else {}
        if name not in reachable:
            why = DRY_RUN_REMOVED if name in removed else "not a tool this step can reach"
            t.record["tools"].append({"tool": name, "event": "refused", "detail": {"reason": why}})
            out.append({"tool": name, "status": "refused", "reason": why})
            continue
        outcome = await host.runner(t).call(
            name, args, host.tool_context(t), events=t.record["tools"]
        )
        out.append(
            {
                "tool": name,
                "status": outcome.status,
                "result": outcome.result,
                "reason": outcome.reason,
            }
        )
    return out


def parse_output(text: str, key: str) -> dict[str, Any]:
    """A model's output: a JSON object when it wrote one, else its text under ``key``."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
            if isinstance(data, dict):
                return data
        except json.JSONDecodeError:
            pass
    return {key: text}
