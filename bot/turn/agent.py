"""One turn: inbox -> pre-flight -> scope -> heads -> values -> gates -> decide -> act -> record.

Each stage writes its part of the turn record (``bot.turn.record``). Turns of one conversation
run one
at a time; a message is stored before any work, so a retried delivery never makes a second turn.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.errors import ProviderError
from bot.events import EventBus
from bot.extend.provider import ModelProvider
from bot.extend.recorder import Recorder
from bot.extend.retriever import Retriever
from bot.flows.engine import FlowEngine, FlowTurn
from bot.metrics import Metrics
from bot.packs import Pack
from bot.preflight import Outcome, Preflight
from bot.store import Conversation, Message, Store
from bot.turn import followups, gates, valuereader
from bot.turn.act import Acted, Actor
from bot.turn.decide import HANDOFF_WHEN_ASKED, Decision, decide
from bot.turn.forecast import forecast
from bot.turn.reading import Readers
from bot.turn.record import new_record
from bot.turn.scope import check_scope
from bot.turn.values import propose, read_values

log = logging.getLogger(__name__)


@dataclass
class TurnResult:
    replies: list[dict[str, Any]]
    record: dict[str, Any]
    duplicate: bool = False


class _Clock:
    """Per-stage timings for the record."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.timings: dict[str, float] = {}

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[f"{stage}_ms"] = round((now - self.last) * 1000, 3)
        self.last = now

    def total(self) -> dict[str, float]:
        return {"total_ms": round((time.perf_counter() - self.start) * 1000, 3), **self.timings}


class Agent:
    def __init__(
        self,
        pack: Pack,
        store: Store,
        provider: ModelProvider,
        retriever: Retriever,
        recorders: list[Recorder],
        events: EventBus,
        metrics: Metrics,
        #: (conversation, reason, kind, question), and ``helpdesk=`` when pre-flight names one.
        escalate: Callable[..., Awaitable[None]],
        relay: Callable[[Conversation, Message], Awaitable[None]],
        preflight: str = "off",
        readers: Readers | None = None,
    ) -> None:
        self.pack, self.store, self.events, self.metrics = pack, store, events, metrics
        self.recorders = recorders
        self.preflight = preflight
        self.readers = readers or Readers(pack)
        self.provider = provider
        #: Where an escalation goes (the help desks), and where a message goes while staff have
        #: the conversation.
        self.escalate, self.relay = escalate, relay
        self.actor = Actor(pack, provider, retriever)
        #: The procedure runtime; the app binds its tools at build (``flows.bind_tools``).
        self.flows = FlowEngine(pack, store, provider, retriever)
        self.preflight_stage = Preflight(pack, provider, self.readers, preflight)
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    async def handle(
        self, conv: Conversation, text: str, external_id: str | None, inbox_key: str | None = None
    ) -> TurnResult:
        """Run one customer message through a turn. ``inbox_key`` (default ``external_id``) is what
        makes a delivery unique on its channel; a repeat returns the first turn's answer."""
        clock = _Clock()
        async with self._lock(conv.id):
            msg, duplicate = self.store.receive(
                conv.id, conv.channel, inbox_key or external_id, text
            )
            if duplicate:
                turn = self.store.turn_for_message(msg.id or 0)
                if turn is not None:
                    self.metrics.inc("gatebot_duplicate_messages_total", channel=conv.channel)
                    return TurnResult(turn.replies, turn.record, duplicate=True)
            else:
                event = {
                    "type": "message",
                    "role": "customer",
                    "text": text,
                    "id": msg.id,
                    "external_id": external_id,
                }
                self.events.publish(conv.id, event)
            return await self._turn(msg, external_id, clock)

    async def recover(self) -> list[tuple[Conversation, TurnResult]]:
        """Run the turns of messages stored but never answered (the process died mid-turn).
        Returns each with its conversation, so the caller can deliver the replies."""
        done = []
        for msg in self.store.pending():
            conv = self.store.get_conversation(msg.conversation_id)
            if conv is None:
                continue
            async with self._lock(conv.id):
                if self.store.turn_for_message(msg.id or 0) is None:
                    done.append((conv, await self._turn(msg, msg.external_id, _Clock())))
        return done

    def _lock(self, conversation_id: str) -> asyncio.Lock:
        """The conversation's lock. Held only while a turn runs: the weak map forgets idle ones."""
        lock = self._locks.get(conversation_id)
        if lock is None:
            lock = self._locks[conversation_id] = asyncio.Lock()
        return lock

    async def _turn(self, msg: Message, external_id: str | None, clock: _Clock) -> TurnResult:
        conv = self.store.get_conversation(msg.conversation_id)
        if conv is None:
            raise LookupError(f"conversation {msg.conversation_id} is gone")
        seq = conv.turn_count + 1
        record = new_record(conv.id, seq, msg.text, conv.channel, external_id, self.preflight)
        if conv.paused:
            return await self._paused_turn(conv, msg, record, clock)
        record["versions"] = {
            "pack": self.pack.version,
            "heads": self.readers.versions,
        }
        state: dict[str, Any] = {"values": {}, **conv.state}
        clock.lap("inbox")

        # The scope check (deterministic, no model) runs first only so that pre-flight never
        # routes a message the scope check declines.
        scope = check_scope(self.pack, msg.text, set(state["values"]))
        record["scope"] = {"verdict": scope["verdict"], "rule": scope["rule"]}
        clock.lap("scope")
        busy = bool(state.get("flow") or state.get("check"))  # a procedure or read-back under way
        pre = await self.preflight_stage.run(msg.text, scope["verdict"], conv.language, busy)
        record["preflight"] = pre.record()
        if pre.acting:
            if pre.language and pre.language != conv.language:
                conv.language = pre.language  # the conversation carries on in it
                self.store.update_conversation(conv.id, language=pre.language)
            if pre.sentence:  # what happened, in the customer's language, for the progress panel
                progress = {"type": "progress", "stage": "preflight", "text": pre.sentence}
                self.events.publish(conv.id, progress)
        clock.lap("preflight")
        routed = self.preflight_stage.routed(pre, conv.language)
        if routed is not None:
            return await self._routed_turn(conv, msg, record, state, seq, routed, pre, clock)

        intent_read, sentiment_read = await self._read_heads(msg.text, state)
        intent_read = pre.intent_read(self.pack, intent_read)  # a flow pre-flight routed to
        record["reads"] = [intent_read, sentiment_read]
        clock.lap("heads")

        history = self.store.messages(conv.id)
        transcript = [
            {"role": "user" if m.role == "customer" else "assistant", "content": m.text}
            for m in history
            if m.id != msg.id
        ][-20:]
        calls: list[dict[str, Any]] = list(pre.model_calls)
        yes_no, checked = followups.resolve_check(state, msg.text, self.pack.gates["yesNo"], seq)
        if yes_no:
            record["reads"].append(yes_no)
        wants_values = self._wants_values(state, intent_read, scope)
        record["values"] = ([checked] if checked else []) + await self._read_values(
            msg.text, history, transcript, state, seq, calls if wants_values else None
        )
        followups.note_values(
            state,
            record["values"],
            intent_read["outcome"] == "act" or scope["question"],
            checked is not None,
        )
        clock.lap("values")

        sentiment_score = sentiment_read.pop("score")
        # While a flow is active (or a confident intent starts one), its next step decides.
        flow = await self._flow_turn(conv, state, scope, intent_read, msg.text, seq, record, calls)
        decision = flow.decision if flow else decide(
            self.pack,
            state,
            scope,
            intent_read,
            pre.sentiment_for_rules({**sentiment_read, "score": sentiment_score}),
            seq,
            await self.readers.move(msg.text),
        )
        if decision.read is not None:
            record["reads"].append(decision.read)
        _record_move(record, decision)
        clock.lap("decide")

        acted = flow.acted if flow and flow.acted else await self.actor.act(
            decision,
            msg.text,
            transcript,
            conv.language,
            publish=lambda event: self.events.publish(conv.id, event),  # tool progress, live
            search_steps=pre.steps_for_turn,  # pre-flight's reasoning level, when routing
        )
        _record_acted(record, acted)
        record["model_calls"] = calls + acted.model_calls
        escalation = self._after_move(conv, state, decision, acted, msg.text, seq)
        if escalation:
            record["move"]["escalate"] = True  # the turn ends with a person, whatever the reason
        record["forecast"] = forecast(self.pack, state, decision.move, sentiment_score)
        clock.lap("act")
        return await self._finish(conv, msg, record, state, seq, acted, decision, escalation, clock)

    async def _routed_turn(
        self,
        conv: Conversation,
        msg: Message,
        record: dict[str, Any],
        state: dict[str, Any],
        seq: int,
        routed: tuple[Decision, Acted],
        pre: Outcome,
        clock: _Clock,
    ) -> TurnResult:
        """Pre-flight answered the turn itself (an FAQ verbatim, or the escalation menu on the
        recommended help desk): no heads, values or model call."""
        decision, acted = routed
        record["reads"] = [pre.routed_read(self.pack)]
        _record_move(record, decision)
        record["move"]["escalate"] = False  # set below when the route is a hand-off
        _record_acted(record, acted)
        record["model_calls"] = list(pre.model_calls)
        escalation: tuple[str, ...] | None = self._after_move(
            conv, state, decision, acted, msg.text, seq
        )
        if decision.move == "handoff":
            escalation = (decision.why, "preflight", pre.route.target or "")
            record["move"]["escalate"] = True
        record["forecast"] = forecast(self.pack, state, decision.move, 0.0)
        clock.lap("act")
        return await self._finish(conv, msg, record, state, seq, acted, decision, escalation, clock)

    async def _finish(
        self,
        conv: Conversation,
        msg: Message,
        record: dict[str, Any],
        state: dict[str, Any],
        seq: int,
        acted: Acted,
        decision: Decision,
        escalation: tuple[str, ...] | None,
        clock: _Clock,
    ) -> TurnResult:
        """Store the turn, hand the record to the recorders, publish the replies, escalate."""
        external_id = record["message"]["external_id"]
        record["timings"] = clock.total()
        conv.state, conv.turn_count = state, seq
        self.store.complete_turn(conv, msg, record, acted.replies, conv.channel)
        await self._deliver_record(record)
        self.metrics.inc("gatebot_turns_total", move=decision.move, channel=conv.channel)
        # The metric covers the whole turn, commit included; the record cannot contain its own
        # commit, so its total_ms stops just before.
        self.metrics.observe("gatebot_turn_seconds", time.perf_counter() - clock.start)
        for reply in acted.replies:
            event = {
                "type": "reply",
                "role": "agent",
                "reply": reply,
                "seq": seq,
                "external_id": external_id,
            }
            self.events.publish(conv.id, event)
        if escalation and len(escalation) > 2:  # pre-flight named the help desk
            await self.escalate(
                conv, escalation[0], escalation[1], msg.text, helpdesk=escalation[2]
            )
        elif escalation:
            # After the turn is stored, so the help desk sees the agent's last line too.
            await self.escalate(conv, escalation[0], escalation[1], msg.text)
        return TurnResult(acted.replies, record)

    async def _flow_turn(
        self,
        conv: Conversation,
        state: dict[str, Any],
        scope: dict[str, Any],
        intent_read: dict[str, Any],
        text: str,
        seq: int,
        record: dict[str, Any],
        calls: list[dict[str, Any]],
    ) -> FlowTurn | None:
        """The flow's part of the turn, or None. Out of scope is declined as usual; the flow
        waits for the next message."""
        if scope["verdict"] == "out" or (not self.pack.flows and "flow" not in state):
            return None
        return await self.flows.turn(conv.id, state, intent_read, text, seq, record, calls)

    async def _paused_turn(
        self, conv: Conversation, msg: Message, record: dict[str, Any], clock: _Clock
    ) -> TurnResult:
        """Staff have the conversation: the agent stays quiet and the message goes to them."""
        record["versions"]["pack"] = self.pack.version
        record["legal"] = {"moves": ["handoff"], "rule": "paused: staff have taken over"}
        record["move"] = {
            "name": "handoff",
            "why": "the message is relayed to the help desk",
            "escalate": False,
        }
        record["timings"] = clock.total()
        conv.turn_count = record["seq"]
        self.store.complete_turn(conv, msg, record, [], conv.channel)
        await self._deliver_record(record)
        await self.relay(conv, msg)
        return TurnResult([], record)

    async def _read_heads(
        self, text: str, state: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        options = state.pop("clarify_options", None)
        intent, mood = await self.readers.read(text, options)
        gates_ = self.pack.gates
        intent_read = gates.read(
            "intent", intent.version, intent.answer, intent.confidence, "intent", gates_["intent"]
        )
        intent_read["ranking"] = intent.ranking
        sentiment_read = gates.read(
            "sentiment",
            mood.version,
            mood.label,
            mood.confidence,
            "sentiment",
            gates_["sentiment"],
            score=round(mood.score, 3),
        )
        return intent_read, sentiment_read

    def _wants_values(
        self, state: dict[str, Any], intent_read: dict[str, Any], scope: dict[str, Any]
    ) -> bool:
        """Whether a model should read values this turn: only while something is being gathered,
        so a turn whose move is deterministic makes no model call."""
        if not self.provider.reads_values or scope["verdict"] == "out":
            return False
        if state.get("asked_slot") or state.get("outcome") or state.get("pending_intent"):
            return True
        intent = (
            self.pack.intent(intent_read["answer"]) if intent_read["outcome"] == "act" else None
        )
        return bool(intent and (intent.needs or intent.outcome) and intent.move != "handoff")

    async def _read_values(
        self,
        text: str,
        history: list[Message],
        transcript: list[dict[str, str]],
        state: dict[str, Any],
        seq: int,
        calls: list[dict[str, Any]] | None,
    ) -> list[dict[str, Any]]:
        """Extractor proposals, plus a model's for what they missed when ``calls`` is given."""
        customer_texts = [m.text for m in history if m.role == "customer"]
        proposals = propose(self.pack, text, state.get("asked_slot"))
        if calls is not None:
            # A reading model replaces the crude bare-answer reader for free-text slots; typed
            # extractors stay, being exact. A rejected model value is not replaced by a guess.
            text_slots = {s.name for s in self.pack.slots if s.type == "text"}
            proposals = [p for p in proposals if p.slot not in text_slots]
            taken = {p.slot for p in proposals}
            try:
                read = await valuereader.read(
                    self.provider, self.pack, text, transcript, state.get("asked_slot"), calls
                )
                proposals += [p for p in read if p.slot not in taken]
            except ProviderError:
                pass  # the extractors' proposals stand; the failed call is in the record
        entries = read_values(
            self.pack, proposals, customer_texts, state["values"], self.pack.gates["value"]
        )
        for entry in entries:
            if entry["outcome"] == "act":
                state["values"][entry["slot"]] = {
                    "value": entry["value"],
                    "source": entry["source"],
                    "seq": seq,
                }
            entry.pop("confidence", None)
        return entries

    def _after_move(
        self,
        conv: Conversation,
        state: dict[str, Any],
        decision: Decision,
        acted: Acted,
        text: str,
        seq: int,
    ) -> tuple[str, str] | None:
        """What a move changes in the conversation's state. Returns the escalation the turn
        leads to, as (reason, kind), or None."""
        followups.after_move(state, decision, text)
        if decision.move == "clarify":
            state["clarify_options"] = decision.options
        if decision.move == "propose":
            state["proposed"] = decision.outcome
        if decision.move == "ask_signup":
            state["last_signup_seq"] = seq
        if decision.move == "stop":
            state["stopped"] = True
            conv.status = "stopped"
        if acted.unanswered:
            state.setdefault("unanswered", []).append(acted.unanswered)
        if decision.move == "decline":
            # Requests the pack does not cover, kept for whoever extends the pack.
            state.setdefault("uncovered", []).append(text)
        if decision.move == "handoff":
            conv.status = "handed_off"
            asked = decision.rule == HANDOFF_WHEN_ASKED
            return decision.rule, "asked" if asked else "unsure"
        if acted.escalate:
            return acted.escalate, "refused"
        if decision.escalate:
            return decision.why, "unsure"
        return None

    async def _deliver_record(self, record: dict[str, Any]) -> None:
        for recorder in self.recorders:
            try:
                await recorder.record(record)
            except Exception:  # a broken recorder must never fail a stored turn
                log.exception("recorder %s failed", getattr(recorder, "name", recorder))


def _record_move(record: dict[str, Any], decision: Decision) -> None:
    """The decide stage's part of the record: the legal set with its rule, the move and why."""
    record["legal"] = {"moves": decision.legal, "rule": decision.rule}
    record["move"] = {"name": decision.move, "why": decision.why, "escalate": decision.escalate}


def _record_acted(record: dict[str, Any], acted: Acted) -> None:
    """The act stage's part: tool events, the facts used, the reply and its gate."""
    record["tools"].extend(acted.tools)
    record["facts"] = [{"key": f.key, "source": f.source, "mode": f.mode} for f in acted.facts]
    record["reply"] = acted.reply
    if record["reply"]["text"] is None:
        record["reply"]["text"] = "\n".join(r["text"] for r in acted.replies if r["type"] == "text")
