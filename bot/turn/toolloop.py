"""A bounded tool loop: model -> tool calls -> results -> model, at most ``max_steps`` rounds.

The model only proposes calls. Each one runs through :class:`bot.extend.tool.ToolRunner`, so
its schema,
ownership and confirmation checks hold and its lifecycle events land in the turn record and on the
live events; an unknown tool or bad arguments is refused there, and the refusal goes back to the
model as that call's result, so it can correct itself within the limit.

When the limit is reached the model gets one last call with ``tool_choice="none"``: it must answer
from what it found. A model that still asks for tools then gets no more rounds; the loop returns
its text (often empty) with ``cut`` set, and the caller's gate decides what the customer sees.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from bot.extend.provider import (
    ModelCall,
    ModelProvider,
    Prompt,
    Response,
    assistant_turn,
    call,
    tool_result,
)
from bot.extend.tool import ToolEvent, ToolOutcome, ToolRunner

DEFAULT_MAX_STEPS = 4
#: Told to the model on its last call, beside the system text.
LAST_CALL = "You have used every tool call this turn allows: answer now from what you found."


@dataclass
class LoopResult:
    response: Response  # the model's last answer (text, no further tool rounds)
    messages: list[dict[str, Any]]  # the prompt's messages plus the whole exchange
    steps: int = 0  # tool rounds run
    cut: bool = False  # the model asked for tools after the limit
    outcomes: list[ToolOutcome] = field(default_factory=list)


def result_content(outcome: ToolOutcome) -> tuple[str, bool]:
    """What the model reads back from one call, and whether it is an error."""
    if outcome.ok:
        result = dict(outcome.result or {})
        result.pop("note", None)  # said for the record; the result speaks for itself
        return json.dumps(result, ensure_ascii=False), False
    return json.dumps({"error": f"{outcome.status}: {outcome.reason}"}, ensure_ascii=False), True


async def run_tool_loop(
    provider: ModelProvider,
    prompt: Prompt,
    runner: ToolRunner,
    *,
    model_calls: list[ModelCall],
    events: list[ToolEvent],
    context: dict[str, Any] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> LoopResult:
    """Run the loop. ``model_calls`` and ``events`` are the turn record's lists; ``context`` is the
    tool context (what the conversation owns). Raises ProviderError as :func:`call` does."""
    tools = [tool.describe() for tool in runner.registry]
    messages = list(prompt.messages)
    loop = LoopResult(Response(""), messages)
    while True:
        last = loop.steps >= max_steps
        step = replace(
            prompt,
            messages=list(messages),
            tools=tools,
            tool_choice="none" if last else "auto",
            system=f"{prompt.system}\n\n{LAST_CALL}" if last else prompt.system,
        )
        loop.response = await call(provider, step, model_calls)
        if not loop.response.tool_calls:
            return loop
        if last:
            loop.cut = True
            events.append(
                {
                    "tool": "",
                    "event": "step_limit",
                    "detail": {
                        "steps": loop.steps,
                        "max_steps": max_steps,
                        "asked": len(loop.response.tool_calls),
                    },
                }
            )
            return loop
        loop.steps += 1
        messages.append(assistant_turn(loop.response.text, loop.response.tool_calls))
        for tool_call in loop.response.tool_calls:
            outcome = await runner.call(
                tool_call.name, tool_call.arguments, context or {}, events=events
            )
            loop.outcomes.append(outcome)
            content, is_error = result_content(outcome)
            messages.append(tool_result(tool_call, content, is_error))
