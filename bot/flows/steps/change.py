"""A ``changes`` tool in a flow: read the change back, then make it only on a confident yes.

The reply to a read-back is read as go ahead (the confirm gate on the yes/no reader), don't (the
change is not made and the flow carries on without it) or a correction: the step's ``correct``
values are read again from the reply, word for word, and the change is read back again, at most
``corrections`` times before a person takes over. An unclear answer is asked once more.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.flows.model import Step
from bot.flows.outcome import StepResult, handoff
from bot.flows.state import context_for, render, render_arguments
from bot.flows.steps.base import worded
from bot.packs import Pack
from bot.text import has_phrase, normalise
from bot.turn import yesno
from bot.turn.decide import Decision
from bot.turn.turn import TurnRecord, ValueEntry
from bot.turn.values import propose

DEFAULT_READ_BACK = "Just to confirm, I'll run {tool} ({arguments}). Shall I go ahead?"


@dataclass
class ChangeTurn:
    """What the read-back needs from the turn; the tool step (:mod:`bot.flows.steps.tool`)
    builds it."""

    flow: str
    step: Step
    pack: Pack
    progress: dict[str, Any]
    values: dict[str, Any]  # the conversation's values, as stored
    text: str
    seq: int
    record: TurnRecord
    say: Callable[[str], None]
    #: Make the change with these arguments, confirmed (the tool step's call, fills, contract).
    make: Callable[[dict[str, Any]], Awaitable[StepResult]]


class ReadBack:
    def __init__(self, c: ChangeTurn) -> None:
        self.c = c

    async def run(self, ctx: dict[str, Any]) -> StepResult:
        """A ``changes`` tool: read back, then call only on a confident yes; a no leaves it
        unmade; a correction re-reads the values and reads back again, up to a bound."""
        c, step = self.c, self.c.step
        waiting = c.progress.get("waiting")
        if not waiting or waiting.get("step") != step.id:
            c.progress["waiting"] = {"step": step.id, "corrections": 0, "asks": 0}
            return self._read_back(ctx, "")
        gate = c.pack.gates["confirm"]
        corrected = self._correction()
        if corrected:
            waiting["corrections"] += 1
            c.record["values"].extend(corrected)
            if waiting["corrections"] > step.corrections:
                c.progress["waiting"] = None
                return StepResult(
                    decision=handoff(
                        f"flow {c.flow} step {step.id}: still corrected after "
                        f"{step.corrections} read-backs"
                    )
                )
            ctx = context_for(c.progress, c.values, c.text)
            return self._read_back(ctx, "")
        read = yesno.read(c.text, "confirm", gate)
        c.record["reads"].append(read)
        outcome, answer = read["outcome"], read["answer"]
        if outcome != "act":
            waiting["asks"] += 1
            if waiting["asks"] >= 2:
                c.progress["waiting"] = None
                return StepResult(
                    decision=handoff(
                        f"flow {c.flow} step {step.id}: the read-back answer stayed unclear"
                    )
                )
            unclear = worded(
                c.pack,
                c.progress.get("language"),
                "flow_unclear_yes_no",
                "Sorry, I need a clear yes or no.",
            )
            return self._read_back(ctx, unclear + " ")
        c.progress["waiting"] = None
        if answer == "no":
            c.record["tools"].append(
                {
                    "tool": step.tools[0],
                    "event": "declined",
                    "detail": {
                        "reason": "the customer said no to the read-back; nothing was changed"
                    },
                }
            )
            return StepResult(
                output={"status": "declined", "arguments": render_arguments(step.arguments, ctx)}
            )
        return await self.c.make(render_arguments(step.arguments, ctx))

    def _read_back(self, ctx: dict[str, Any], prefix: str) -> StepResult:
        c, step = self.c, self.c.step
        text = prefix + render(
            step.template or DEFAULT_READ_BACK,
            {**ctx, "arguments": render_arguments(step.arguments, ctx), "tool": step.tools[0]},
        )
        c.say(text)
        decision = Decision(
            ["confirm", "handoff"],
            f"flow {c.flow}: step {step.id} changes something, so it is read back first",
            move="confirm",
            why=f"flow {c.flow} step {step.id}: read-back before {step.tools[0]}",
        )
        return StepResult(decision=decision, note={"read_back": text})

    def _correction(self) -> list[ValueEntry]:
        """Values the reply corrects, read with the correction in view: a declared choice, or a
        typed value, found word for word in the customer's message."""
        c, step = self.c, self.c.step
        norm = normalise(c.text)
        entries: list[ValueEntry] = []
        proposals = {p.slot: p.value for p in propose(c.pack, c.text, None)}
        for slot in step.correct:
            current = c.values.get(slot, {}).get("value")
            found = next(
                (ch for ch in step.choices.get(slot, []) if has_phrase(norm, normalise(ch))), None
            ) or proposals.get(slot)
            if found is not None and str(found) != str(current):
                c.values[slot] = {"value": found, "source": "customer", "seq": c.seq}
                entries.append(
                    {
                        "slot": slot,
                        "value": found,
                        "source": "customer",
                        "outcome": "act",
                        "rejected": [{"value": current, "reason": "corrected by the customer"}],
                    }
                )
        return entries
