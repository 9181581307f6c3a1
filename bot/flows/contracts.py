"""Contracts: deterministic definitions of done for a step's output.

Every check is a pure assertion over the output and the run's state, so the verdict is the same
whichever model wrote the output. A failure yields concrete feedback that the executor appends to
the step's prompt for a bounded number of retries.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bot.flows.model import STUB_MARKERS, Contract
from bot.turn.replygate import CITATION

#: What ``test-driven`` attaches when a step declares no contract of its own.
DEFAULT = Contract(requires=["text"], no_stubs=True)
#: ... and on a tool_call step: the call must have succeeded.
DEFAULT_TOOL = Contract(no_stubs=False, tool_status="ok")


def check(contract: Contract, output: dict[str, Any], resolvable: set[str]) -> list[str]:
    """Every failed assertion, worded as what to fix. Empty means done."""
    problems: list[str] = []
    for key in contract.requires:
        value = output.get(key)
        if value in (None, "", [], {}):
            problems.append(f"the output must include a non-empty {key!r}")
    for key, pattern in contract.patterns.items():
        value = output.get(key)
        if value is None or re.search(pattern, str(value)) is None:
            problems.append(f"{key!r} must match the pattern {pattern!r} (got {value!r})")
    text = json.dumps(output, ensure_ascii=False)
    if contract.no_stubs:
        for marker in STUB_MARKERS:
            if re.search(rf"(?i)(?<!\w){re.escape(marker)}(?!\w)", text):
                problems.append(f"the output contains the stub marker {marker!r}; write it out")
    if contract.citations_resolve:
        for key in dict.fromkeys(CITATION.findall(text)):
            if key not in resolvable:
                problems.append(f"the citation [{key}] names nothing known; cite a real key")
    if contract.tool_status is not None and output.get("status") != contract.tool_status:
        problems.append(
            f"the tool's status must be {contract.tool_status!r}, not {output.get('status')!r}"
        )
    return problems


def feedback(problems: list[str]) -> str:
    return "Your previous output was not accepted: " + "; ".join(problems) + ". Fix each point."
