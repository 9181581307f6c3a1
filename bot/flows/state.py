"""A run's state as steps see it, and the declared tests and templates that read it.

The context a step sees is ``{"values": {slot: value}, "outputs": {step id: output}, "message":
text}``; paths such as ``outputs.lookup.result.amount`` read into it. Nothing here calls a model.
"""

from __future__ import annotations

import re
from typing import Any

from bot.flows.model import Condition

_MISSING = object()
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\}")


def lookup(path: str, context: dict[str, Any]) -> Any:
    here: Any = context
    for part in path.split("."):
        if isinstance(here, dict) and part in here:
            here = here[part]
        elif isinstance(here, list) and part.isdigit() and int(part) < len(here):
            here = here[int(part)]
        else:
            return _MISSING
    return here


def holds(cond: Condition, context: dict[str, Any]) -> bool:
    value = lookup(cond.path, context)
    present = value is not _MISSING and value not in (None, "")
    if cond.exists is not None:
        return present == cond.exists
    if not present and not cond.has_equals:
        return False
    if cond.has_equals:
        return (None if value is _MISSING else value) == cond.equals
    if cond.one_of is not None:
        return value in cond.one_of
    if cond.matches is not None:
        return re.search(cond.matches, str(value)) is not None
    return present


def render(template: str, context: dict[str, Any]) -> str:
    """Fill ``{path}`` placeholders; an unknown one is left visible rather than guessed."""

    def fill(m: re.Match[str]) -> str:
        value = lookup(m.group(1), context)
        return m.group(0) if value is _MISSING or value is None else str(value)

    return _PLACEHOLDER.sub(fill, template)


def render_arguments(arguments: Any, context: dict[str, Any]) -> Any:
    """A tool's arguments from its declaration: a string that is one placeholder keeps the
    value's own type; other strings are filled as text."""
    if isinstance(arguments, dict):
        return {k: render_arguments(v, context) for k, v in arguments.items()}
    if isinstance(arguments, list):
        return [render_arguments(v, context) for v in arguments]
    if isinstance(arguments, str):
        whole = _PLACEHOLDER.fullmatch(arguments)
        if whole:
            value = lookup(whole.group(1), context)
            return None if value is _MISSING else value
        return render(arguments, context)
    return arguments


def context_for(progress: dict[str, Any], values: dict[str, Any], message: str) -> dict[str, Any]:
    """What a step sees: plain slot values, every output so far, this message."""
    return {
        "values": {k: v.get("value") if isinstance(v, dict) else v for k, v in values.items()},
        "outputs": dict(progress.get("outputs", {})),
        "message": message,
    }
