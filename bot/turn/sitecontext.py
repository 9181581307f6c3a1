"""Site context with consent: the page a visitor is on, shared only after they consented.

The widget sends the page's URL, title and referrer only once the visitor said yes (or the host
site says it collected that consent itself); a refusal is recorded too, with no page. The pack's
``context.yaml`` turns the page into a hypothesis (bot.packs.context). The hypothesis shapes the
first question only: the greeting names the likely product, a clarify question offers the likely
intent first. It is recorded on every turn as a hypothesis (``message.context``), and nothing
else reads it: no value is filled from it and no gate is passed with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.packs.context import GREETING, GREETING_WITH_PRODUCT
from bot.packs.model import Pack
from bot.turn.turn import ContextPart, ConversationState, TurnRecord

if TYPE_CHECKING:
    from bot.turn.decide import Decision


def note(record: TurnRecord, state: ConversationState) -> None:
    """The conversation's consent, page and hypothesis go into the turn's record."""
    site = state.get("site")
    if site is not None:
        part: ContextPart = {**site, "shaped": None}
        record["message"]["context"] = part


def shape(pack: Pack, record: TurnRecord, state: ConversationState, decision: Decision) -> None:
    """Let the hypothesis order the first question, and record that it did. Only the order of
    what the rules already chose changes: the options of a clarify question (never one the
    intent head did not offer), or the greeting's wording."""
    site = state.get("site")
    hypothesis = site["hypothesis"] if site is not None else None
    context = record["message"].get("context")
    if not hypothesis or context is None:
        return
    intent, product = hypothesis.get("intent"), hypothesis.get("product_name")
    if decision.move == "clarify" and intent in decision.options[1:]:
        decision.options = [intent, *(o for o in decision.options if o != intent)]
        context["shaped"] = f"clarify options: {intent} first"
    elif decision.template == GREETING and product and _has(pack, GREETING_WITH_PRODUCT):
        decision.template, decision.product = GREETING_WITH_PRODUCT, product
        context["shaped"] = f"greeting: {product}"


def _has(pack: Pack, template: str) -> bool:
    return template in pack.templates[pack.language]
