"""Why a tool said no, in words a customer can act on, and never as if it had worked.

Two refusals are the customer's to hear: a value outside what the tool declares (its argument
schema's ``maximum``, ``minimum`` or ``enum``: the call never ran, so nothing changed), and the
service's own answer that it will not do it (an HTTP 4xx with its message). Anything else (an
ownership check, a service that did not answer) is not explained away: a person looks at it.
"""

from __future__ import annotations

import re
from typing import Any

from bot.extend.tool import ToolOutcome

#: How the API catalog words a service's refusal: "orders.x answered HTTP 409: <its message>".
_SERVICE_SAID = re.compile(r"answered HTTP 4\d\d: (?P<said>.+)$", re.DOTALL)


def explainable(outcome: ToolOutcome) -> bool:
    """A refusal the customer can be told: a declared limit, or the service's own no."""
    if outcome.status == "refused":
        return outcome.argument is not None
    return outcome.status == "failed" and _SERVICE_SAID.search(outcome.reason or "") is not None


def service_words(reason: str) -> str:
    """The service's own message in a failure reason, without the transport around it."""
    found = _SERVICE_SAID.search(reason)
    return found.group("said").strip().rstrip(".") if found else reason.rstrip(".")


def declared(schema: dict[str, Any] | None, argument: str) -> dict[str, Any]:
    """What the tool's schema declares about one argument."""
    props = (schema or {}).get("properties", {})
    found = props.get(argument, {}) if isinstance(props, dict) else {}
    return found if isinstance(found, dict) else {}


def why(outcome: ToolOutcome, schema: dict[str, Any] | None, arguments: dict[str, Any]) -> str:
    """The reason for a single change, from the declaration when a value broke it."""
    if outcome.status == "failed" or outcome.argument is None:
        return service_words(outcome.reason or "it was refused")
    name, spec = outcome.argument, declared(schema, outcome.argument)
    value = arguments.get(name)
    said = name.replace("_", " ")
    if "enum" in spec:
        return f"the {said} must be one of {', '.join(map(str, spec['enum']))}"
    if _number(value) and "maximum" in spec and value > spec["maximum"]:
        return f"the {said} can be at most {spec['maximum']}"
    if _number(value) and "minimum" in spec and value < spec["minimum"]:
        return f"the {said} must be at least {spec['minimum']}"
    return service_words(outcome.reason or f"the {said} is not one the service accepts")


def change_limit(spec: dict[str, Any], delta: int, noun: Any) -> str | None:
    """ "the most you can add at once is 50 seats" when ``delta`` is past the declared bound of
    the quantity argument (``spec``); ``noun(count)`` names the item."""
    bound: Any = spec.get("maximum") if delta > 0 else spec.get("minimum")
    if not _number(bound):
        return None
    most = int(bound)
    if (delta > 0 and delta <= most) or (delta < 0 and delta >= most):
        return None
    verb, count = ("add", most) if delta > 0 else ("remove", -most)
    return f"the most you can {verb} at once is {count} {noun(count)}"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
