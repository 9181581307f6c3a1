"""The per-turn conversion forecast and the conversation's stage.

Not validated against real outcomes, and the record says so. Until a forecast head is trained
from reviewed conversations, this is a declared logistic rule over the qualification record, so a
later outcome can be traced to exactly what produced the number.
"""

from __future__ import annotations

import math

from bot.packs import Pack
from bot.turn.turn import ConversationState, ForecastPart

VERSION = "forecast-rules@1"

# log-odds: a base rate, then what each signal adds.
_BASE = -3.0
_STAGE = {"discover": 0.0, "qualify": 1.0, "propose": 2.5}
_PER_SLOT = 0.5
_SENTIMENT = 1.0
_STOPPED = -4.0


def stage(pack: Pack, state: ConversationState, move: str) -> str:
    """discover (no outcome in view), qualify (an outcome with slots missing), propose."""
    if move == "propose" or state.get("proposed"):
        return "propose"
    return "qualify" if state.get("outcome") else "discover"


def forecast(pack: Pack, state: ConversationState, move: str, sentiment: float) -> ForecastPart:
    current = stage(pack, state, move)
    logit = _BASE + _STAGE[current] + _PER_SLOT * len(state.get("values", {}))
    logit += _SENTIMENT * sentiment + (_STOPPED if state.get("stopped") else 0.0)
    p = 1 / (1 + math.exp(-logit))
    return {"p_convert": round(p, 4), "validated": False, "version": VERSION, "stage": current}
