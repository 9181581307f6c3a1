"""Pre-flight: one cheap read of each customer message, before the heads, that can route the
obvious cases (a flow, an FAQ answered verbatim, a request for a person) and sets the turn's
language, search budget and frustration. See :mod:`bot.preflight.stage`."""

from bot.preflight.answers import QUESTIONS, Answer
from bot.preflight.route import Route, choose
from bot.preflight.stage import MODES, Outcome, Preflight
from bot.preflight.viamodel import PreflightFailed

__all__ = [
    "MODES",
    "QUESTIONS",
    "Answer",
    "Outcome",
    "Preflight",
    "PreflightFailed",
    "Route",
    "choose",
]
