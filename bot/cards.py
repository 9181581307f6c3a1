"""Card numbers a customer types are masked before anything keeps or reads them.

A Luhn-valid run of 13 to 19 digits (spaces or dashes between them allowed) becomes stars with
its last four digits kept, so a person can still tell which card was meant. Masking happens once,
where a customer message enters a turn (:meth:`bot.turn.agent.Agent.handle`): the stored message,
the turn record, flow checkpoints and every model call all start from the masked text.
"""

from __future__ import annotations

import re

# Digits with at most one space or dash between neighbours: a candidate, tested below.
_RUN = re.compile(r"(?<![\w-])\d(?:[ -]?\d)+(?![\w])")
_GROUP = re.compile(r"\d+")
MIN_DIGITS, MAX_DIGITS, KEEP = 13, 19, 4


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def mask_cards(text: str) -> str:
    """``text`` with every card number in it masked, last four digits kept."""
    return _RUN.sub(_mask_run, text) if any(c.isdigit() for c in text) else text


def _mask_run(match: re.Match[str]) -> str:
    run = match.group(0)
    digits = re.sub(r"\D", "", run)
    if MIN_DIGITS <= len(digits) <= MAX_DIGITS and luhn_ok(digits):
        return _stars(run)
    # A card beside other numbers ("order 1044 4111 1111 1111 1111"): try whole groups.
    groups = list(_GROUP.finditer(run))
    for i in range(len(groups)):
        for j in range(len(groups) - 1, i, -1):
            span = "".join(g.group(0) for g in groups[i : j + 1])
            if MIN_DIGITS <= len(span) <= MAX_DIGITS and luhn_ok(span):
                start, end = groups[i].start(), groups[j].end()
                return run[:start] + _stars(run[start:end]) + run[end:]
    return run


def _stars(run: str) -> str:
    """Digits become '*' except the last four; the separators stay where they were."""
    seen, out = sum(c.isdigit() for c in run), []
    for ch in run:
        if ch.isdigit():
            seen -= 1
            out.append(ch if seen < KEEP else "*")
        else:
            out.append(ch)
    return "".join(out)
