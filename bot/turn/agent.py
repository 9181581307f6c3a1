"""One turn: inbox -> pre-flight -> scope -> heads -> values -> gates -> decide -> act -> record.

Each stage receives the typed :class:`~bot.turn.turn.Turn` and writes its part of the turn
record (``bot.turn.record``). Turns of one conversation run one at a time; a message is stored
before any work, so a retried delivery never makes a second turn.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

from bot.cards import mask_cards
from bot.errors import ProviderError
from bot.events import EventBus
from bot.extend.provider import ModelCall, ModelProvider
from bot.extend.recorder import Recorder
from bot.extend.retriever import Retriever
from bot.flows.engine import FlowEngine, FlowTurn
from bot.flows.trigger import ExampleIndex, Signals
from bot.metrics import Metrics
from bot.packs import Pack
from bot.preflight import Outcome, Preflight
from bot.preflight.language import reply_language
from bot.store import Conversation, Message, Received, Store
from bot.store.runner import StoreRunner
from bot.store.turnlock import ConversationBusy, TurnLocks
from bot.text import (
    asks_for_person,
    asks_how,
    asks_the_agent,
    asks_to_be_shown,
    asks_to_know,
    goes_alone,
    is_question,
    names_person,
    only_values,
    tells_done,
    whole_and_sentences,
)
from bot.turn import (
    answerable,
    followup_query,
    followups,
    gates,
    sitecontext,
    valuereader,
    waiting,
)
from bot.turn.act import Acted, Actor
from bot.turn.decide import (
    HANDOFF_ACCEPTED,
    HANDOFF_WHEN_ASKED,
    LEADS,
    Decision,
    MoveScores,
    decide,
)
from bot.turn.forecast import forecast
from bot.turn.queryvec import MessageVectors
from bot.turn.reading import IntentReading, Readers
from bot.turn.record import new_record
from bot.turn.scope import ScopeCheck
from bot.turn.turn import (
    Clock,
    ConversationState,
    Escalation,
    Read,
    Scope,
    Turn,
    TurnRecord,
    ValueEntry,
    state_of,
)
from bot.turn.values import propose, read_values

log = logging.getLogger(__name__)


@dataclass
class TurnResult:
    replies: list[dict[str, Any]]
    record: TurnRecord
    duplicate: bool = False


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
        db: StoreRunner | None = None,
        locks: TurnLocks | None = None,
    ) -> None:
        self.pack, self.store, self.events, self.metrics = pack, store, events, metrics
        #: The store's calls on the turn's path, off the event loop and within a deadline.
        self.db = db or StoreRunner(store)
        self.recorders = recorders
        self.preflight = preflight
        self.readers = readers or Readers(pack)
        self.provider = provider
        #: Where an escalation goes (the help desks), and where a message goes while staff have
        #: the conversation.
        self.escalate, self.relay = escalate, relay
        # Knowledge search takes the message's vector the heads' batcher made (one embedding).
        self.actor = Actor(pack, provider, retriever, vectors=MessageVectors(self.readers.batcher))
        #: The procedure runtime; the app binds its tools at build (``flows.bind_tools``).
        self.flows = FlowEngine(pack, store, provider, retriever)
        self.preflight_stage = Preflight(pack, provider, self.readers, preflight, retriever)
        self.scope_check = ScopeCheck(pack, self.readers, retriever=retriever)
        # The flows' examples beside every intent's, on the heads' embedding: which is nearest
        # (and, for a message in another language, in the retriever's cross-language space).
        self.flow_examples = ExampleIndex(pack, self.readers.batcher, retriever)
        #: Turns of one conversation one at a time, in this process and across processes.
        self.locks = locks or TurnLocks()

    async def handle(
        self, conv: Conversation, text: str, external_id: str | None, inbox_key: str | None = None
    ) -> TurnResult:
        """Run one customer message through a turn. ``inbox_key`` (default ``external_id``) is what
        makes a delivery unique on its channel; a repeat returns the first turn's answer. A key
        scoped to the conversation is ``CONVERSATION_ID:EXTERNAL_ID`` (the web channel's), so a
        turn re-run after a crash can still record the client's own id."""
        clock = Clock()
        # Once, here: the stored message, the record, checkpoints and model calls all read this.
        text = mask_cards(text)
        # Under the lock before the message is stored: a repeat delivery (to this process or
        # another) waits for the first turn and answers from it; the seq is read after the wait.
        async with self.locks.hold(conv.id):
            received = await self.db.call(
                self.store.receive_turn, conv.id, conv.channel, inbox_key or external_id, text
            )
            msg = received.message
            if received.turn is not None:
                self.metrics.inc("gatebot_duplicate_messages_total", channel=conv.channel)
                record = cast(TurnRecord, received.turn.record)  # stored by an earlier turn
                return TurnResult(received.turn.replies, record, duplicate=True)
            if not received.duplicate:
                event = {
                    "type": "message",
                    "role": "customer",
                    "text": text,
                    "id": msg.id,
                    "external_id": external_id,
                }
                self.events.publish(conv.id, event)
            return await self._turn(received, external_id, clock)

    async def recover(self) -> list[tuple[Conversation, TurnResult]]:
        """Run the turns of messages stored but never answered (the process died mid-turn).
        Returns each with its conversation, so the caller can deliver the replies."""
        done = []
        for msg in await self.db.call(self.store.pending):
            try:
                # Try once: a turn another process runs now is not ours to finish.
                async with self.locks.hold(msg.conversation_id, wait=0):
                    received = await self.db.call(self._unfinished, msg)
                    if received is not None and received.conversation is not None:
                        external_id = _client_id(msg.conversation_id, msg.external_id)
                        turn = await self._turn(received, external_id, Clock())
                        done.append((received.conversation, turn))
            except ConversationBusy:
                continue
        return done

    def _unfinished(self, msg: Message) -> Received | None:
        """A pending message with its conversation and transcript, unless its turn got done."""
        if self.store.turn_for_message(msg.id or 0) is not None:
            return None
        conv = self.store.get_conversation(msg.conversation_id)
        history = self.store.messages(msg.conversation_id)
        return Received(msg, True, conv, history)

    def _begin(self, received: Received, external_id: str | None, clock: Clock) -> Turn:
        conv, msg = received.conversation, received.message
        if conv is None:
            raise LookupError(f"conversation {msg.conversation_id} is gone")
        seq = conv.turn_count + 1
        record = new_record(
            conv.id,
            seq,
            msg.text,
            conv.channel,
            external_id,
            self.preflight,
            conv.verified_user_id,
        )
        record["versions"] = {"pack": self.pack.version, "heads": self.readers.versions}
        turn = Turn(conv, msg, seq, state_of(conv), record, clock)
        sitecontext.note(record, turn.state)  # the page shared with consent, as a hypothesis
        turn.history = received.history
        return turn

    async def _turn(self, received: Received, external_id: str | None, clock: Clock) -> TurnResult:
        turn = self._begin(received, external_id, clock)
        if turn.conversation.paused:
            return await self._paused_turn(turn)
        if waiting.is_waiting(turn.conversation):
            held = await self._waiting_turn(turn)
            if held is not None:
                return held
        clock.lap("inbox")
        scope = await self._scope(turn)
        pre = await self._preflight(turn, scope)
        routed = self.preflight_stage.routed(pre, turn.conversation.language)
        if routed is not None:
            return await self._routed_turn(turn, routed, pre)
        intent_read, sentiment_read = await self._perceive(turn, pre)
        transcript = await self._values(turn, scope, intent_read)
        sentiment_score = float(sentiment_read.pop("score", 0.0))
        sentiment = pre.sentiment_for_rules({**sentiment_read, "score": sentiment_score})
        # While a flow is active (or the message starts one), its next step decides.
        flow = await self._flow_turn(turn, scope, intent_read, sentiment)
        if flow is not None:
            decision = flow.decision
        else:
            move_scores = await self.readers.move(turn.text)
            gave = any(v["outcome"] == "act" for v in turn.record["values"])
            decision = decide(
                self.pack,
                turn.state,
                scope,
                intent_read,
                sentiment,
                turn.seq,
                move_scores,
                gave,
                asks_how(turn.text),
                goes_alone(turn.text) or tells_done(turn.text),
                names_person(turn.text),
            )
            decision = await self._answer_first(turn, decision, move_scores)
        sitecontext.shape(self.pack, turn.record, turn.state, decision)
        self._record_decision(turn, decision)
        if flow and flow.acted:
            acted = flow.acted
        else:
            acted = await self._act(turn, decision, transcript, pre)
        self._conclude(turn, decision, acted, sentiment_score)
        return await self._finish(turn, acted, decision)

    async def _scope(self, turn: Turn) -> Scope:
        """The scope check (deterministic, no model) runs first only so that pre-flight never
        routes a message the scope check declines. Its domain check embeds the message through
        the heads' batcher, which keeps the vector for pre-flight and the heads."""
        scope = await self.scope_check.check(turn.text, turn.state)
        turn.record["scope"] = {
            "verdict": scope["verdict"],
            "rule": scope["rule"],
            "score": scope.get("score"),
            "threshold": scope.get("threshold"),
        }
        turn.clock.lap("scope")
        return scope

    async def _preflight(self, turn: Turn, scope: Scope) -> Outcome:
        conv, state = turn.conversation, turn.state
        busy = bool(state.get("flow") or state.get("check"))  # a procedure or read-back under way
        pre = await self.preflight_stage.run(turn.text, scope["verdict"], conv.language, busy)
        turn.record["preflight"] = pre.record()
        turn.model_calls.extend(pre.model_calls)
        if pre.acting:
            if pre.language and pre.language != conv.language:
                conv.language = pre.language  # the conversation carries on in it
                await self.db.call(self.store.update_conversation, conv.id, language=pre.language)
            if pre.sentence:  # what happened, in the customer's language, for the progress panel
                progress = {"type": "progress", "stage": "preflight", "text": pre.sentence}
                self.events.publish(conv.id, progress)
        turn.clock.lap("preflight")
        return pre

    async def _perceive(self, turn: Turn, pre: Outcome) -> tuple[Read, Read]:
        """The heads' readings: intent (a flow pre-flight routed to stands in for it) and mood."""
        intent_read, sentiment_read = await self._read_heads(turn.text, turn.state)
        intent_read = pre.intent_read(self.pack, intent_read)
        answered = intent_read.get("reason") == "value_only"  # a value given asks for nobody
        if intent_read["outcome"] != "act" and not answered:
            intent_read = await self._person_across(turn.text, intent_read)
        if intent_read["outcome"] != "act" and not answered:
            intent_read = await self._person_near(turn.text, intent_read)
        if not answered and asks_for_person(turn.text):
            intent_read = self._person_in_words(intent_read)
        turn.record["reads"] = [intent_read, sentiment_read]
        turn.clock.lap("heads")
        return intent_read, sentiment_read

    async def _values(self, turn: Turn, scope: Scope, intent_read: Read) -> list[dict[str, str]]:
        """A pending value check's answer, then this message's values. Returns the transcript
        (the last 20 messages before this one) for the act stage."""
        state, record = turn.state, turn.record
        history = turn.history
        transcript = [
            {"role": "user" if m.role == "customer" else "assistant", "content": m.text}
            for m in history
            if m.id != turn.message.id
        ][-20:]
        yes_no, checked = followups.resolve_check(
            state, turn.text, self.pack.gates["yesNo"], turn.seq
        )
        if yes_no:
            record["reads"].append(yes_no)
        offer = followups.resolve_offer(state, turn.text, self.pack.gates["yesNo"])
        if offer:
            record["reads"].append(offer)
        calls = turn.model_calls if self._wants_values(state, intent_read, scope) else None
        record["values"] = ([checked] if checked else []) + await self._read_values(
            turn, history, transcript, calls
        )
        asked_for_more = intent_read["outcome"] == "act" or scope["question"]
        followups.note_values(state, record["values"], asked_for_more, checked is not None)
        turn.clock.lap("values")
        return transcript

    async def _answer_first(
        self, turn: Turn, decision: Decision, move_scores: MoveScores | None
    ) -> Decision:
        """A question the pack answers is answered before a playbook asks for a value or offers
        a choice: "do you have a free trial?" needs no email to be told about the trial. Only a
        question or a request to be told ("I'd like to know whether ..."; a request to act, "I
        want to start a free trial", still qualifies the lead), and only
        when the answerability check acts on it (the same check the answer path runs), so a
        question the pack holds no fact for still gets its ask or clarify."""
        if decision.move not in ("ask", "clarify") or turn.state.get("check"):
            return decision
        # A question, or "I'd like to know whether ..."; before a choice of intents, a question
        # beside a request too: "if the on-call dev doesnt answer the alert who gets it next?
        # can we set that up" is answered rather than asked "did you mean ...?".
        asks = asks_to_know(turn.text)
        if not asks and decision.move == "clarify":
            said = whole_and_sentences(turn.text)
            # (a sentence that asks the agent to do something is a request: "Can you refund
            # it?"; "can we run the build agents on our own boxes?" asks whether one may)
            asks = any(is_question(s) and not asks_the_agent(s) for s in said)
        if not asks:
            return decision
        if not await self._pack_answers(turn):
            return decision
        rule = f"{decision.rule}; the pack answers the question: answer before asking"
        return Decision(["answer", "handoff"], rule).choose(move_scores, self.pack.gates["policy"])

    def _record_decision(self, turn: Turn, decision: Decision) -> None:
        if decision.read is not None:
            turn.record["reads"].append(decision.read)
        _record_move(turn.record, decision)
        turn.clock.lap("decide")

    async def _act(
        self, turn: Turn, decision: Decision, transcript: list[dict[str, str]], pre: Outcome
    ) -> Acted:
        conv_id = turn.conversation.id
        query, query_from, _ = await self._search_query(turn, decision.move == "answer")
        # A Spanish question is answered in Spanish templates, whatever the conversation's was.
        said_in = self._language(turn)
        acted = await self.actor.act(
            decision,
            query,
            transcript,
            said_in,
            publish=lambda event: self.events.publish(conv_id, event),  # tool progress, live
            search_steps=pre.steps_for_turn,  # pre-flight's reasoning level, when routing
            verified_user_id=turn.conversation.verified_user_id,
            values={slot: v["value"] for slot, v in turn.state["values"].items()},
            intent=decision.intent or _acted_intent(turn.record),
            # (a follow-up searched with the question before is no longer the message alone)
            edge=turn.record["scope"]["rule"] == "domain:edge" and query_from != "follow-up",
        )
        for read in acted.reads:
            if read["head"] == answerable.HEAD and acted.query is not None:
                read.setdefault("query", acted.query)
                # The question an ask was waiting on is answered now, rather than this message.
                read["query_from"] = query_from if acted.query == query else "pending question"
        return acted

    def _conclude(self, turn: Turn, decision: Decision, acted: Acted, sentiment: float) -> None:
        """The act stage's part of the record, what the move leaves in the state, whether a
        person takes over, and the forecast."""
        _record_acted(turn.record, acted)
        turn.record["model_calls"] = turn.model_calls + acted.model_calls
        # What the move leaves in the state always; its escalation unless one is set already
        # (pre-flight's hand-off names its own desk).
        escalation = self._after_move(turn, decision, acted)
        turn.escalation = turn.escalation or escalation
        # The turn ends with a person, whatever the reason.
        turn.record["move"]["escalate"] = turn.escalation is not None
        turn.record["forecast"] = forecast(self.pack, turn.state, decision.move, sentiment)
        turn.clock.lap("act")

    async def _routed_turn(
        self, turn: Turn, routed: tuple[Decision, Acted], pre: Outcome
    ) -> TurnResult:
        """Pre-flight answered the turn itself (an FAQ verbatim, or the escalation menu on the
        recommended help desk): no heads, values or model call."""
        decision, acted = routed
        turn.record["reads"] = [pre.routed_read(self.pack)]
        _record_move(turn.record, decision)
        if decision.move == "handoff":
            turn.escalation = Escalation(decision.why, "preflight", pre.route.target or None)
        self._conclude(turn, decision, acted, 0.0)
        return await self._finish(turn, acted, decision)

    async def _finish(self, turn: Turn, acted: Acted, decision: Decision) -> TurnResult:
        """Store the turn, hand the record to the recorders, publish the replies, escalate."""
        conv, record, seq = turn.conversation, turn.record, turn.seq
        if decision.move == "handoff" and turn.escalation is not None:
            waiting.tell_what_next(self.pack, turn, acted, self._language(turn))
        record["timings"] = turn.clock.total()
        conv.state, conv.turn_count = dict(turn.state), seq
        await self.locks.confirm(conv.id)  # a turn whose lease lapsed stores nothing
        await self.db.call(
            self.store.complete_turn, conv, turn.message, record, acted.replies, conv.channel
        )
        await self._deliver_record(record)
        self.metrics.inc("gatebot_turns_total", move=decision.move, channel=conv.channel)
        # The metric covers the whole turn, commit included; the record cannot contain its own
        # commit, so its total_ms stops just before.
        self.metrics.observe("gatebot_turn_seconds", turn.clock.now() - turn.clock.start)
        external_id = record["message"]["external_id"]
        for reply in acted.replies:
            event = {
                "type": "reply",
                "role": "agent",
                "reply": reply,
                "seq": seq,
                "external_id": external_id,
            }
            self.events.publish(conv.id, event)
        esc = turn.escalation
        if esc is not None:
            # After the turn is stored, so the help desk sees the agent's last line too.
            await self.escalate(conv, esc.reason, esc.kind, turn.text, helpdesk=esc.desk)
        return TurnResult(acted.replies, record)

    async def _flow_turn(
        self, turn: Turn, scope: Scope, intent_read: Read, sentiment: Read
    ) -> FlowTurn | None:
        """The flow's part of the turn, or None. Out of scope is declined as usual; the flow
        waits for the next message. An upset customer is not started on a procedure: the
        playbook acknowledges them and offers a person first (a running flow carries on)."""
        if scope["verdict"] == "out" or (not self.pack.flows and "flow" not in turn.state):
            return None
        upset = sentiment["outcome"] == "act" and sentiment["answer"] == "hostile"
        if upset and "flow" not in turn.state and turn.state.get("offered_person") != "declined":
            return None
        if "flow" in turn.state:
            return await self.flows.turn(turn, intent_read)
        near = await self.flow_examples.nearest(turn.text)
        # The flow the message would start, read once: the engine starts this one.
        started = self.flows.trigger(intent_read, turn.text, near)
        if started is None or await self._answered_not_started(turn, started[1]):
            return None
        return await self.flows.turn(turn, intent_read, near, started)

    async def _answered_not_started(self, turn: Turn, s: Signals) -> bool:
        """A question the pack answers is answered, not taken for a flow's request, where only
        a lean of the head or closeness to an example would start the flow: "I'd like to kick
        the tires properly. Can I test everything first, and for how long?" leans to demo (0.54)
        and the trial entry answers it; "A few product managers only need to look at the
        dashboards. Can I add them without paying a seat for each one?" sits near a seats
        example and the roles passage answers it. A confident intent, the flow's own words, a
        change read, a request to be shown or one made of the agent ("can you add a couple?")
        still start it."""
        if not asks_to_know(turn.text) or asks_the_agent(turn.text):
            return False
        if s.intent or s.routed or s.worded or s.change is not None or s.across or s.shown:
            return False
        return await self._pack_answers(turn)

    async def _search_query(
        self, turn: Turn, answering: bool
    ) -> tuple[str, str, answerable.Checked | None]:
        """What knowledge search reads for the message, where it came from, and its check where
        one was made on the way: a follow-up ("how much is it?") with the question before it
        (:func:`.followup_query.query_for`), checked against the message alone only when the
        turn answers (``answering``)."""
        query, query_from = followup_query.retrieval_query(self.pack, turn.text, turn.state)
        if query_from != "follow-up" or not answering:
            return query, query_from, None
        threshold = self.pack.gates[answerable.GATE]
        retriever, text = self.actor.retriever, turn.text[:500]
        vector = await self.actor.vectors.get(text) if retriever.takes_vector else None
        return await followup_query.query_for(
            self.pack, retriever, text, turn.state, threshold, vector
        )

    async def _pack_answers(self, turn: Turn) -> bool:
        """Whether the answerability check acts on the message (the answer path's own check),
        a follow-up read with the question before it as the answer path reads it: "and do i
        need a card for that?" after a trial question is answered, not asked "did you mean
        pricing or starting a free trial?"."""
        retriever, text = self.actor.retriever, turn.text[:500]
        query, _, checked = await self._search_query(turn, True)
        if checked is None or len(query) > 500:  # (the joined query's check, made on the way)
            query = query[:500]
            # The heads' batched vector, as the answer path uses: no second embedding of it.
            alone = query == text
            vector = (
                await self.actor.vectors.get(text) if alone and retriever.takes_vector else None
            )
            threshold = self.pack.gates[answerable.GATE]
            checked = await answerable.check(retriever, query, threshold, vector=vector)
        return checked is not None and checked.answers

    async def _paused_turn(self, turn: Turn) -> TurnResult:
        """Staff have the conversation: the agent stays quiet and the message goes to them."""
        conv, record = turn.conversation, turn.record
        record["legal"] = {
            "moves": ["handoff"],
            "rule": "paused: staff have taken over",
            "outcome": None,
        }
        record["move"] = {
            "name": "handoff",
            "why": "the message is relayed to the help desk",
            "escalate": False,
        }
        record["timings"] = turn.clock.total()
        conv.turn_count = turn.seq
        await self.locks.confirm(conv.id)
        await self.db.call(self.store.complete_turn, conv, turn.message, record, [], conv.channel)
        await self._deliver_record(record)
        await self.relay(conv, turn.message)
        return TurnResult([], record)

    async def _waiting_turn(self, turn: Turn) -> TurnResult | None:
        """A hand-off nobody has taken yet (bot.turn.waiting): the message goes to the desk, the
        reply is only the waiting line, and a team chosen from the escalation menu gets it.
        None when no escalation waits after all (none was queued): the turn runs as usual."""
        conv = turn.conversation
        esc = await self.db.call(self.store.waiting_escalation, conv.id, ("open", "emailed"))
        if esc is None:
            conv.status = "open"
            return None
        desk = self.pack.helpdesk_named(esc.helpdesk)
        decision, acted, chosen = waiting.waiting_move(
            self.pack, turn.state, turn.text, desk, self._language(turn)
        )
        _record_move(turn.record, decision)
        _record_acted(turn.record, acted)
        if chosen is not None:
            turn.escalation = Escalation(decision.why, "preflight", chosen.name)
        turn.record["move"]["escalate"] = chosen is not None
        result = await self._finish(turn, acted, decision)
        if chosen is None:  # a moved escalation's new post already carries this message
            await self.relay(conv, turn.message)
        return result

    def _language(self, turn: Turn) -> str:
        pack = self.pack
        # A flow under way speaks its own language (bot.flows.engine): its questions' wrappers
        # and read-backs follow it, even after a bare email or "yes".
        flow = turn.state.get("flow") or {}
        current = flow.get("language") or turn.conversation.language
        return reply_language(turn.text, current, pack.language, [*pack.templates])

    async def _person_across(self, text: str, intent_read: Read) -> Read:
        """A request for a person in another language than the pack's, which the heads (they
        read English) cannot see: the hand-off intent when the cross-language read finds its
        lines nearest by a clear margin (:meth:`bot.flows.across.AcrossIndex.hands_off`)."""
        found = await self.flow_examples.across.hands_off(text)
        if found is None:
            return intent_read
        read = gates.read(
            "intent",
            f"{intent_read['version']}+across",
            found.flow,
            found.cosine,
            "intent",
            self.pack.gates["intent"],
        )
        # The cosine is no probability: the margin the read cleared is what vouches for it.
        read["outcome"], read["across"] = "act", found.as_dict()
        read["ranking"] = intent_read.get("ranking", [])
        return read

    async def _person_near(self, text: str, intent_read: Read) -> Read:
        """A request for a person the intent head is unsure of: the hand-off intent when its
        lines (and the playbook's hand-off lines) are nearest the message on the heads'
        embedding, at the ``flowExample`` gate and a clear margin
        (:meth:`bot.flows.trigger.ExampleIndex.hands_off`), so a hand-off is read by more than
        the move head alone."""
        if asks_to_be_shown(text) and any(
            step.lead == "demo" for flow in self.pack.flows.values() for step in flow.steps
        ):
            # "Could I set up a call with your sales people?": a call to be shown the product is
            # a demo lead (the demo flow qualifies it for the same desk), however near the
            # hand-off lines it sits; asked in so many words, a person is still handed off.
            return intent_read
        found = await self.flow_examples.hands_off(text, self.pack.gates["flowExample"])
        if found is None:
            return intent_read
        read = gates.read(
            "intent",
            f"{intent_read['version']}+near",
            found.intent,
            found.cosine,
            "intent",
            self.pack.gates["intent"],
        )
        # The cosine is no probability: the margin the read cleared is what vouches for it.
        read["outcome"], read["near"] = "act", found.as_dict()
        read["ranking"] = intent_read.get("ranking", [])
        return read

    def _person_in_words(self, intent_read: Read) -> Read:
        """A request for a person in so many words (:func:`bot.text.asks_for_person`: "Please
        have someone call me back", "escalate this to a manager") is the hand-off intent, read
        by a declared rule, unless the head already acts on a hand-off or on a flow's intent (a
        procedure asked for: "I want a refund, have someone call me" starts the refund, whose
        hand-off is the flow's to make). A question the head reads ("get someone from your sales
        team to contact me about volume pricing": pricing) is no reason to answer instead."""
        handoff = self.pack.handoff_intent()
        acting = self.pack.intent(intent_read["answer"] or "")
        if handoff is None or (
            intent_read["outcome"] == "act"
            and acting is not None
            and (acting.move == "handoff" or acting.name in self.pack.flow_intents())
        ):
            return intent_read
        read = gates.read(
            "intent",
            f"{intent_read['version']}+words",
            handoff.name,
            1.0,
            "intent",
            self.pack.gates["intent"],
        )
        read["ranking"] = intent_read.get("ranking", [])
        read["words"] = {
            "answer": intent_read["answer"],
            "confidence": intent_read["confidence"],
            "outcome": intent_read["outcome"],
        }
        return read

    async def _read_heads(self, text: str, state: ConversationState) -> tuple[Read, Read]:
        options = state.pop("clarify_options", None)
        intent, mood = await self.readers.read(text, options)
        gates_ = self.pack.gates
        intent_read = gates.read(
            "intent", intent.version, intent.answer, intent.confidence, "intent", gates_["intent"]
        )
        intent_read["ranking"] = intent.ranking
        if intent.reason:  # the head abstains however sure its softmax is (a novel message)
            intent_read["outcome"], intent_read["reason"] = "unsure", intent.reason
        elif only_values(text):
            # "sam@example.com" typed as an answer asks for nothing, though an email address reads
            # as a request for a person (the hand-off lines say "get in touch with me").
            intent_read["outcome"], intent_read["reason"] = "unsure", "value_only"
        if shadow := await self.readers.shadow_intent(text, options):
            intent_read["shadow"] = dict(_shadow_read(shadow, gates_["intent"]))
        sentiment_read = gates.read(
            "sentiment",
            mood.version,
            mood.label,
            mood.confidence,
            "sentiment",
            gates_["sentiment"],
        )
        sentiment_read["score"] = round(mood.score, 3)
        return intent_read, sentiment_read

    def _wants_values(self, state: ConversationState, intent_read: Read, scope: Scope) -> bool:
        """Whether a model should read values this turn: only while something is being gathered,
        so a turn whose move is deterministic makes no model call."""
        if not self.provider.reads_values or scope["verdict"] == "out":
            return False
        if state.get("asked_slot") or state.get("outcome") or state.get("pending_intent"):
            return True
        intent = (
            self.pack.intent(intent_read["answer"] or "")
            if intent_read["outcome"] == "act"
            else None
        )
        return bool(intent and (intent.needs or intent.outcome) and intent.move != "handoff")

    async def _read_values(
        self,
        turn: Turn,
        history: list[Message],
        transcript: list[dict[str, str]],
        calls: list[ModelCall] | None,
    ) -> list[ValueEntry]:
        """Extractor proposals, plus a model's for what they missed when ``calls`` is given."""
        state, text = turn.state, turn.text
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
                    "seq": turn.seq,
                }
            entry.pop("confidence", None)
        return entries

    def _after_move(self, turn: Turn, decision: Decision, acted: Acted) -> Escalation | None:
        """What a move changes in the conversation's state. Returns the escalation the turn
        leads to, or None."""
        state, conv = turn.state, turn.conversation
        followups.after_move(state, decision, turn.text)
        if decision.move == "clarify":
            state["clarify_options"] = decision.options
        if decision.move == "propose":
            state["proposed"] = decision.outcome
        if decision.move == "ask_signup":
            state["last_signup_seq"] = turn.seq
        if decision.move == "stop":
            state["stopped"] = True
            conv.status = "stopped"
        if acted.unanswered:
            state.setdefault("unanswered", []).append(acted.unanswered)
        if acted.query is not None or is_question(turn.text):
            # What a follow-up's "it" refers to: the question searched, or else the one asked.
            state["last_question"] = (acted.query or turn.text)[:500]
        # What the turn answered from, for a short message after it (followup_query.carries_on):
        # an answer told (not one the reply gate refused and queued for a person).
        answered = decision.move == "answer" and not acted.escalate and not acted.unanswered
        state["last_answered"] = [f.key for f in acted.facts] if answered else []
        if decision.move == "decline":
            # Requests the pack does not cover, kept for whoever extends the pack.
            state.setdefault("uncovered", []).append(turn.text)
        self._offer_and_resume(turn, decision)
        if decision.move == "handoff":
            conv.status = "handed_off"
            asked = decision.rule in (HANDOFF_WHEN_ASKED, HANDOFF_ACCEPTED)
            return Escalation(decision.rule, "asked" if asked else "unsure")
        if acted.escalate:
            return Escalation(acted.escalate, "refused")
        if decision.escalate:
            return Escalation(decision.why, "unsure")
        if decision.move == "propose" and decision.outcome in LEADS:
            # A qualified lead is delivered to the desk that takes leads, with what was learned.
            return Escalation(f"qualified lead: {decision.outcome}", "lead")
        return None

    @staticmethod
    def _offer_and_resume(turn: Turn, decision: Decision) -> None:
        """An offer of a person waits for its answer; the customer's own request after a no
        lifts the no; a hand-off settles any offer."""
        if decision.move == "acknowledge":
            turn.state["offered_person"] = "offered"
        elif decision.move == "handoff":
            turn.state.pop("offered_person", None)
        if decision.resumes:
            turn.state["stopped"] = False
            turn.conversation.status = "open"

    async def _deliver_record(self, record: TurnRecord) -> None:
        for recorder in self.recorders:
            try:
                await recorder.record(record)
            except Exception:  # a broken recorder must never fail a stored turn
                log.exception("recorder %s failed", getattr(recorder, "name", recorder))


def _record_move(record: TurnRecord, decision: Decision) -> None:
    """The decide stage's part of the record: the legal set with its rule, the move and why."""
    record["legal"] = {
        "moves": decision.legal,
        "rule": decision.rule,
        "outcome": decision.outcome,
    }
    record["move"] = {"name": decision.move, "why": decision.why, "escalate": decision.escalate}


def _record_acted(record: TurnRecord, acted: Acted) -> None:
    """The act stage's part: its reads (answerability), tool events, the facts used, the reply
    and its gate."""
    record["reads"].extend(acted.reads)
    record["tools"].extend(acted.tools)
    record["facts"] = [{"key": f.key, "source": f.source, "mode": f.mode} for f in acted.facts]
    record["reply"] = acted.reply
    if record["reply"]["text"] is None:
        record["reply"]["text"] = "\n".join(r["text"] for r in acted.replies if r["type"] == "text")


def _acted_intent(record: TurnRecord) -> str | None:
    """The intent the heads read past its gate this turn, if any."""
    read = next((r for r in record["reads"] if r["head"] == "intent"), None)
    return read["answer"] if read is not None and read["outcome"] == "act" else None


def _client_id(conversation_id: str, inbox_key: str | None) -> str | None:
    """The client's id inside a stored inbox key: the part after ``CONVERSATION_ID:`` for a key
    scoped to the conversation, else the key itself (Slack's and Discord's are the id)."""
    if inbox_key is None:
        return None
    return inbox_key.removeprefix(f"{conversation_id}:")


def _shadow_read(reading: IntentReading, threshold: float) -> Read:
    """A candidate head's reading as the record keeps it, under the acting read's ``shadow``:
    the same fields, gated the same way, and nothing downstream reads it."""
    read = gates.read(
        "intent", reading.version, reading.answer, reading.confidence, "intent", threshold
    )
    read["ranking"] = reading.ranking
    if reading.reason:
        read["outcome"], read["reason"] = "unsure", reading.reason
    return read
