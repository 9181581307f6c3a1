"""The typed turn: what every stage receives and fills.

A :class:`Turn` carries the conversation, the stored message, the turn's number, the
conversation's :class:`ConversationState` (carried from turn to turn) and the
:class:`TurnRecord` (the append-only account of this one turn). Both are TypedDicts, so they
serialise to exactly the JSON that ``../DESIGN.md`` describes and that earlier records hold; the
types only say which keys exist and what they hold.
"""

# No ``from __future__ import annotations`` here: TypedDict reads NotRequired[...] only from
# real annotations, and the record's optional keys depend on it.

import time
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from bot.extend.provider import ModelCall
from bot.extend.tool import ToolEvent
from bot.store import Conversation, Message

# -- the conversation's state, carried between turns ------------------------------------------


class SlotValue(TypedDict):
    value: Any
    source: str  # customer | system
    seq: int


class ValueCheck(TypedDict):
    """A value read below its gate, being checked with the customer ("is it 5843990922?")."""

    slot: str
    value: Any
    tries: int
    asked: bool


class ConversationState(TypedDict, total=False):
    """Everything the agent remembers about a conversation between its turns."""

    values: dict[str, SlotValue]
    asked_slot: str | None  # the slot the last question asked for
    outcome: str | None  # the outcome being qualified (demo, trial, ...)
    pending_intent: str  # a request waiting for its slots ...
    pending_question: str  # ... and the question itself, answered once they are known
    check: ValueCheck
    slot_misses: dict[str, int]
    clarify_misses: int
    clarify_options: list[str]
    proposed: str | None
    last_signup_seq: int
    stopped: bool
    unanswered: list[str]  # questions no fact answered, for whoever extends the pack
    uncovered: list[str]  # requests the pack does not cover
    owned: dict[str, list[str]]  # what a lookup granted this conversation (tool ownership)
    offered_person: str  # the offer of a person: "offered", then "accepted" or "declined"
    flow: dict[str, Any]  # the active flow's progress (bot.flows.engine.start_progress)
    last_question: str  # the last query knowledge search read, for a follow-up to join
    last_answered: list[str]  # the keys of the facts the last turn answered from (none: [])
    escalation_menu: list[dict[str, str]]  # the menu's desks and labels, for the click (waiting)
    email_codes: dict[str, dict[str, Any]]  # one-time codes by email (bot.flows.steps.emailcode)
    email_code_sends: list[float]  # when this conversation's codes were sent (their cap)
    site: "SiteContext"  # the page the visitor shared, with consent (bot.turn.sitecontext)


def state_of(conv: Conversation) -> ConversationState:
    """The conversation's state as this turn starts (a copy: the turn writes it back at the end)."""
    state: ConversationState = {"values": {}}
    state.update(conv.state)  # type: ignore[typeddict-item]  # stored JSON, written by us
    return state


# -- the turn record ----------------------------------------------------------------------------


class UserPart(TypedDict):
    """Who the customer is, when verified: ``channel:user_id`` (a signed web identity, a Slack or
    Discord user); null id when anonymous. Never the signing secret or the hash."""

    id: str | None
    verified: bool


class SiteConsent(TypedDict):
    """Whether the visitor consented to share the page, who collected it (``visitor``: the
    widget asked; ``site``: the host site did) and when (ISO 8601, UTC)."""

    given: bool
    source: str
    at: str


class SiteContext(TypedDict):
    """The shared page and what the pack's ``context.yaml`` makes of it: a hypothesis only."""

    consent: SiteConsent
    page: dict[str, str] | None  # url, title, referrer; null when consent was refused
    hypothesis: dict[str, Any] | None  # match, product, product_name, intent


class ContextPart(SiteContext):
    #: What the hypothesis shaped this turn ("clarify options: pricing first"), or null.
    shaped: str | None


class MessagePart(TypedDict):
    text: str
    channel: str
    external_id: str | None
    user: UserPart
    context: NotRequired[ContextPart]  # only when the conversation has a consent on record


class PreflightPart(TypedDict):
    mode: str
    answers: list[dict[str, Any]]
    acted: dict[str, Any] | None
    decision: str | None  # what the answers decide (recorded in shadow mode too)
    sentence: str | None  # what the customer is told happened, in their language
    error: str | None  # why pre-flight could not be used; the turn ran without it
    version: str
    ms: float


class Scope(TypedDict):
    """The scope check's verdict (:func:`bot.turn.scope.check_scope`); ``verdict`` and ``rule``
    go into the record."""

    verdict: str  # in | out | needs_input
    rule: str
    question: NotRequired[bool]  # whether the message asks something
    template: NotRequired[str | None]  # out: the decline template
    slot: NotRequired[str]  # needs_input: the slot it needs
    score: NotRequired[float | None]  # the domain check's closeness; None when it did not run
    threshold: NotRequired[float | None]  # the pack's fitted threshold; None likewise


class ScopePart(TypedDict):
    verdict: str | None
    rule: str | None
    #: The domain check's closeness of the message to the pack, and the fitted threshold below
    #: which it declines; both null when the check did not run (a declared rule decided, the
    #: customer was answering the agent, or embeddings are off).
    score: float | None
    threshold: float | None


class Read(TypedDict):
    head: str
    version: str
    answer: str | None
    confidence: float
    gate: str
    threshold: float
    outcome: str  # act | skip | unsure
    ranking: NotRequired[list[Any]]  # the intent head's likeliest answers
    score: NotRequired[float]  # the sentiment head's signed score
    legal: NotRequired[dict[str, float]]  # the move head's mass on each legal move
    reason: NotRequired[str]  # why the read is unsure whatever its confidence: novel, value_only
    query: NotRequired[str]  # answerability: the query knowledge search read
    query_from: NotRequired[str]  # ... "message", "follow-up" (joined with the last question)
    #: The pack's candidate head's reading of the same message (a shadow): recorded, never acting.
    shadow: NotRequired[dict[str, Any]]
    #: intent: a request for a person in another language, read across languages (the
    #: hand-off intent's nearest line: flow (the intent's name), language, cosine, margin).
    across: NotRequired[dict[str, Any]]
    #: intent: a request for a person the head was unsure of, read from the pack's lines nearest
    #: it (the hand-off intent's nearest line: intent, cosine, margin).
    near: NotRequired[dict[str, Any]]
    #: intent: a request for a person in so many words (``bot.text.asks_for_person``, a declared
    #: rule): what the head had read (answer, confidence, outcome).
    words: NotRequired[dict[str, Any]]


class Rejected(TypedDict):
    value: Any
    reason: str


class ValueEntry(TypedDict):
    slot: str
    value: Any
    source: str
    outcome: str
    rejected: list[Rejected]
    confidence: NotRequired[float]


class LegalPart(TypedDict):
    moves: list[str]
    rule: str | None
    outcome: str | None  # the playbook outcome the moves work toward (demo: asked or proposed)


class MovePart(TypedDict):
    name: str | None
    why: str | None
    escalate: bool


class FactEntry(TypedDict):
    key: str
    source: str
    mode: str


class GateResult(TypedDict):
    passed: bool | None
    reasons: list[str]
    rules: list[str]  # the reply gate's rule behind each reason (bot.turn.replygate.RULES)


class ReplyPart(TypedDict):
    text: str | None
    gate: GateResult
    attempts: int


class ForecastPart(TypedDict):
    p_convert: float | None
    validated: bool
    version: NotRequired[str]
    stage: NotRequired[str]


class VersionsPart(TypedDict):
    pack: str | None
    heads: dict[str, str]


class TurnRecord(TypedDict):
    """The complete account of one turn. Every key is on every turn (``bot.turn.record``)."""

    conversation_id: str
    seq: int
    message: MessagePart
    preflight: PreflightPart
    scope: ScopePart
    reads: list[Read]
    values: list[ValueEntry]
    legal: LegalPart
    move: MovePart
    facts: list[FactEntry]
    reply: ReplyPart
    flow: dict[str, Any] | None  # {"name", "run", "step", "status", "steps"}
    tools: list[ToolEvent]
    model_calls: list[ModelCall]  # bot.extend.provider.call's entries
    forecast: ForecastPart
    versions: VersionsPart
    timings: dict[str, float]


# -- the turn -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Escalation:
    """Why a person is asked to take over: the reason, the kind (``asked``, ``refused``,
    ``unsure``, ``preflight``) and, when pre-flight recommended one, the help desk."""

    reason: str
    kind: str
    desk: str | None = None


class Clock:
    """Per-stage timings for the record. ``now`` is injectable, so tests need no wall clock."""

    def __init__(self, now: Any = time.perf_counter) -> None:
        self.now = now
        self.start = self.last = now()
        self.timings: dict[str, float] = {}

    def lap(self, stage: str) -> None:
        now = self.now()
        self.timings[f"{stage}_ms"] = round((now - self.last) * 1000, 3)
        self.last = now

    def total(self) -> dict[str, float]:
        return {"total_ms": round((self.now() - self.start) * 1000, 3), **self.timings}


@dataclass
class Turn:
    """One customer message on its way through the stages."""

    conversation: Conversation
    message: Message
    seq: int
    state: ConversationState
    record: TurnRecord
    clock: Clock = field(default_factory=Clock)
    #: Model calls made this turn, in order (pre-flight's, a value reader's, the reply's).
    model_calls: list[ModelCall] = field(default_factory=list)
    escalation: Escalation | None = None
    #: The conversation's messages, this one included, oldest first (read with the inbox).
    history: list[Message] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.message.text
