"""The pre-flight stage of a turn: answer the seven questions, record them, and in routing mode
act on what is above threshold.

- ``off``: nothing runs; the record says ``mode: off``.
- ``shadow``: the answers and the decision they would make are recorded; nothing else changes,
  so the customer gets exactly the reply they would get without pre-flight.
- ``routing``: an FAQ is answered with its stored text, a request for a person opens the
  escalation menu, a flow starts through the intent read that triggers it; the detected language
  picks the templates, the reasoning level bounds the knowledge-search steps, and strong
  frustration counts as hostile for the playbook's hard rules.

A failed pre-flight (the model's bad JSON, a timeout, a provider error) leaves the turn as it
would run without pre-flight, with the failure in the record.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from bot.extend.provider import ModelCall, ModelProvider
from bot.extend.retriever import Fact, Retriever
from bot.packs import Pack
from bot.preflight.answers import Answer, by_question, gated, search_steps
from bot.preflight.offline import OfflinePreflight
from bot.preflight.route import Route, choose
from bot.preflight.viamodel import ModelPreflight, PreflightFailed
from bot.turn.act import Acted, text_reply
from bot.turn.decide import Decision
from bot.turn.reading import Readers
from bot.turn.turn import PreflightPart, Read

log = logging.getLogger(__name__)

MODES = ("off", "shadow", "routing")


def complete_languages(pack: Pack) -> set[str]:
    """Languages with every template the pack's own language has: only these may word a whole
    turn (a partial one would fall back to the "fallback" template for what it lacks)."""
    needed = set(pack.templates[pack.language])
    return {lang for lang, names in pack.templates.items() if needed <= set(names)}


@dataclass
class Outcome:
    mode: str
    answers: list[Answer] = field(default_factory=list)
    route: Route = field(default_factory=lambda: Route("none"))
    language: str | None = None  # the confident language, when it may word the turn
    search_steps: int | None = None
    hostile: bool = False
    sentence: str | None = None
    error: str | None = None
    model_calls: list[ModelCall] = field(default_factory=list)
    version: str = ""
    ms: float = 0.0

    @property
    def acting(self) -> bool:
        return self.mode == "routing" and self.error is None and bool(self.answers)

    def record(self) -> PreflightPart:
        """The turn record's ``preflight`` part."""
        acted = None
        if self.acting:
            acted = {
                "route": self.route.label,
                "why": self.route.why,
                "language": self.language,
                "search_steps": self.search_steps,
                "hostile": self.hostile,
            }
        return {
            "mode": self.mode,
            "answers": [a.as_dict() for a in self.answers],
            "acted": acted,
            "decision": self.route.label if self.answers else None,
            "sentence": self.sentence,
            "error": self.error,
            "version": self.version,
            "ms": self.ms,
        }

    @property
    def steps_for_turn(self) -> int | None:
        """The knowledge-search step limit this turn, when routing may set it."""
        return self.search_steps if self.acting else None

    def routed_read(self, pack: Pack) -> Read:
        """The read that stands for a routed turn (the FAQ key, or the hand-off intent)."""
        found = by_question(self.answers)
        if self.route.kind == "person":
            handoff = next((i.name for i in pack.intents if i.move == "handoff"), "person")
            return self.read(handoff, "person", self.route.confidence, found["person"].threshold)
        faq = found["faq"]
        return self.read(str(faq.answer), "faq", faq.confidence, faq.threshold)

    def read(self, answer: str, question: str, confidence: float, threshold: float) -> Read:
        """A read in the turn record's shape, for what pre-flight decided."""
        return {
            "head": "preflight",
            "version": self.version,
            "answer": answer,
            "confidence": round(confidence, 4),
            "gate": f"preflight.{question}",
            "threshold": threshold,
            "outcome": "act",
        }

    def intent_read(self, pack: Pack, head_read: Read) -> Read:
        """Routing to a flow: a confident read of the flow's trigger intent, so the decide stage
        starts the flow as it would for any confident read. Otherwise the head's read stands."""
        if not self.acting or self.route.kind != "flow":
            return head_read
        trigger = _trigger_intent(pack, self.route.target)
        if trigger is None:
            return head_read
        flow = by_question(self.answers)["flow"]
        read = self.read(trigger, "flow", flow.confidence, flow.threshold)
        read["ranking"] = head_read.get("ranking", [])
        return read

    def sentiment_for_rules(self, read: Read) -> Read:
        """Strong frustration above its threshold counts as hostile for the hard rules (no
        selling), whatever the sentiment head's own gate said."""
        if not self.acting or not self.hostile or read.get("answer") == "hostile":
            return read
        return {**read, "answer": "hostile", "outcome": "act"}


def _trigger_intent(pack: Pack, flow: str | None) -> str | None:
    from bot.preflight.candidates import flow_candidates

    cand = next((c for c in flow_candidates(pack) if c.key == flow), None)
    return cand.intents[0] if cand and cand.intents else None


class Preflight:
    def __init__(
        self,
        pack: Pack,
        provider: ModelProvider,
        readers: Readers,
        mode: str = "off",
        retriever: Retriever | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"pre-flight mode must be one of {MODES}, got {mode!r}")
        self.pack, self.mode = pack, mode
        # The offline provider has no model to ask: the heads, embeddings and the knowledge
        # retriever's FAQ match answer instead.
        self.reader: OfflinePreflight | ModelPreflight = (
            OfflinePreflight(pack, readers, retriever)
            if provider.name == "offline"
            else ModelPreflight(pack, provider)
        )
        self._complete = complete_languages(pack)

    async def answers(self, text: str, calls: list[ModelCall]) -> list[Answer]:
        """The seven answers, gated. Raises :class:`PreflightFailed`."""
        if isinstance(self.reader, ModelPreflight):
            raw = await self.reader.answer(text, [], calls)
        else:
            raw = await self.reader.answer(text)
        return gated(self.pack, raw)

    async def run(
        self, text: str, scope_verdict: str | None, language: str, busy: bool = False
    ) -> Outcome:
        """Pre-flight for one message. ``language`` is the conversation's so far; ``busy`` says a
        flow or a confirmation is under way, which an FAQ or another flow must not cut into (a
        request for a person still goes through)."""
        out = Outcome(self.mode, version=self.reader.version)
        if self.mode == "off":
            return out
        if scope_verdict == "out":  # declined from a template before any model is asked
            out.route = choose(self.pack, [], scope_verdict)
            return out
        started = time.perf_counter()
        try:
            out.answers = await self.answers(text, out.model_calls)
        except PreflightFailed as exc:
            out.error = str(exc)
        except Exception as exc:  # pre-flight is an optimisation: it never fails a turn
            log.exception("pre-flight failed")
            out.error = f"pre-flight failed: {type(exc).__name__}: {exc}"
        out.ms = round((time.perf_counter() - started) * 1000, 3)
        if not out.answers:
            return out
        found = by_question(out.answers)
        out.route = choose(self.pack, out.answers, scope_verdict)
        if busy and out.route.kind in ("faq", "flow"):
            out.route = Route("none", why=f"{out.route.label} held: a flow or a check is under way")
        lang = found.get("language")
        turn_language = language
        if lang and lang.above and lang.answer in self.pack.templates:
            turn_language = str(lang.answer)
            if lang.answer in self._complete:
                out.language = str(lang.answer)
        level = found.get("reasoning")
        if level and level.above:
            out.search_steps = search_steps(self.pack).get(str(level.answer))
        frustration = found.get("frustration")
        out.hostile = bool(frustration and frustration.above and frustration.answer == "high")
        out.sentence = self._sentence(out.route, turn_language)
        return out

    def _sentence(self, route: Route, language: str) -> str | None:
        """What the customer is told happened, in their language; never a flow's name."""
        name = f"preflight_{route.kind}"
        if name not in self.pack.templates[self.pack.language]:
            return None
        return self.pack.template(name, language)

    def routed(self, out: Outcome, language: str) -> tuple[Decision, Acted] | None:
        """The move and its replies when routing answers the turn itself (an FAQ verbatim, or
        the escalation menu); None when the turn runs on (a flow starts through its intent)."""
        if not out.acting:
            return None
        route = out.route
        if route.kind == "faq":
            entry = next((f for f in self.pack.faq if f.key == route.target), None)
            if entry is None:
                return None
            why = (
                f"pre-flight: FAQ {entry.key} matched at {route.confidence:.2f}; its stored answer"
            )
            decision = Decision(["answer"], f"pre-flight: FAQ {entry.key} above threshold")
            decision.move, decision.why = "answer", why
            citation = {"key": entry.key, "title": entry.question, "source": "faq"}
            acted = Acted(
                [text_reply(entry.answer, [citation])],
                facts=[
                    Fact(entry.key, entry.answer, "faq", "faq", route.confidence, entry.question)
                ],
            )
            acted.reply["text"] = entry.answer
            return decision, acted
        if route.kind == "person":
            desk = route.target or ""
            why = f"pre-flight: asked for a person ({route.confidence:.2f}); {desk} help desk"
            decision = Decision(["handoff"], "pre-flight: hand off when asked")
            decision.move, decision.why = "handoff", why
            card = {
                "type": "card",
                "card": "escalation_menu",
                "helpdesk": desk,
                "options": [
                    {
                        "helpdesk": h.name,
                        "label": h.description or h.name,
                        "recommended": h.name == desk,
                    }
                    for h in sorted(self.pack.helpdesks, key=lambda h: h.name != desk)
                ],
            }
            text = self.pack.template("handoff", language)
            acted = Acted([text_reply(text), card])
            acted.reply["text"] = text
            return decision, acted
        return None
