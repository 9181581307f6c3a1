"""The playbook: hard rules, then the outcome rule table, give the legal moves; then a move.

Hard rules come first and cannot be outvoted: hand off when asked, stop after a no, no selling to a
hostile visitor or after a no, no signup ask at low sentiment or too soon after the last one. The
outcome table turns the qualification record into the next step: a thin record names the slots
that block it (the agent asks about those), a full one makes the closing move legal and drops
discovery questions. With no move head, the playbook's preference picks among the legal moves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.packs import Pack
from bot.packs.model import Intent, OutcomeRule
from bot.turn import gates
from bot.turn.turn import ConversationState, Read, Scope, ValueCheck

SELLING = ("propose", "ask_signup")
#: Outcomes a person follows up on: proposing one delivers the lead to a help desk.
LEADS = ("demo", "engineer")
HANDOFF_WHEN_ASKED = "hard rule: hand off when asked"
HANDOFF_ACCEPTED = "hard rule: hand off when the customer accepts the offer of a person"
#: What an upset customer meets instead of a question or a guess: an acknowledgement, and a person.
ACKNOWLEDGE_UPSET = "hard rule: acknowledge a frustrated customer and offer a person"
#: Moves that ask the customer for something; an upset customer is not asked for anything.
_ASKING = ("ask", "clarify", "confirm")
#: An unsure read this likely of a person makes a hand-off the playbook's preference. Not 0.5
#: ("more likely than not"): once the hand-off intent learnt "can I talk to someone from your
#: sales team", questions about who may do something ("can someone who isn't the account owner
#: download our invoices?") read a person at 0.51 to 0.58, while the requests it missed read 0.68+.
PERSON_LIKELY = 0.6


@dataclass
class Decision:
    legal: list[str]
    rule: str
    move: str = ""
    why: str = ""
    escalate: bool = False
    slot: str | None = None  # for ask: the slot asked about
    outcome: str | None = None  # for propose: the outcome being closed
    options: list[str] = field(default_factory=list)  # for clarify: the likeliest intents
    value: str | None = None  # for confirm: the candidate value being checked
    intent: str | None = None  # for ask: the intent waiting on the slot
    question: str | None = None  # for answer: the question asked before its slots were known
    wording: str | None = None  # for ask: the question's own words (a flow step's), if any
    template: str | None = None
    product: str | None = None  # the product a template names (a site-context greeting)
    read: Read | None = None  # the move head's reading, for the turn record
    #: The customer asked for an outcome themselves after saying no: selling may resume.
    resumes: bool = False

    def choose(self, move_scores: MoveScores | None = None, gate: float = 0.9) -> Decision:
        """Pick among the legal moves. One legal move is forced. With a move head's scores, the
        head picks when it is confident (at the policy ``gate``); the probability it puts on moves
        the rules forbid counts for the playbook's preference, so it overrides the playbook only
        when it is sure. Unsure: the playbook's preference, and the turn is marked to escalate."""
        if not self.legal:
            self.legal = ["handoff"]
            self.rule += "; nothing else legal, so hand off"
        preferred = self.move = self.legal[0]
        if len(self.legal) == 1:
            self.why = "forced: the only legal move"
            return self
        if move_scores is None:
            self.why = "no move head: the playbook's first preference among legal moves"
            return self
        mass = dict.fromkeys(self.legal, 0.0)
        for move, p in move_scores.scores:
            mass[move if move in mass else preferred] += p
        best = max(self.legal, key=lambda m: (mass[m], m == preferred))
        self.read = gates.read("move", move_scores.version, best, mass[best], "policy", gate)
        self.read["legal"] = {m: round(p, 4) for m, p in mass.items()}
        if mass[best] >= gate:
            self.move = best
            self.why = f"move head: {best} at {mass[best]:.2f} among the legal moves"
        else:
            self.escalate = True
            self.why = (
                f"move head unsure ({best} at {mass[best]:.2f}, gate {gate}): the playbook's "
                "preference, marked to escalate"
            )
        return self


@dataclass
class MoveScores:
    """A move head's reading of one message: every move with its probability."""

    version: str
    scores: list[tuple[str, float]]


def _calls_for(pack: Pack, intent_name: str) -> str | None:
    """The plain move an intent calls for; None for one that ends, hands off or sells."""
    intent = pack.intent(intent_name)
    if intent is None or intent.outcome or intent.template:
        return None
    move = intent.move or pack.default_move
    return move if move in ("answer", "ask") else None


def _outcome_rule(pack: Pack, outcome: str) -> OutcomeRule | None:
    return next((r for r in pack.outcomes if r.outcome == outcome), None)


def decide(
    pack: Pack,
    state: ConversationState,
    scope: Scope,
    intent_read: Read,
    sentiment_read: Read,
    seq: int,
    move_scores: MoveScores | None = None,
    gave_values: bool = False,
    asks_how: bool = False,
    alone: bool = False,
    person_named: bool = True,
) -> Decision:
    """The legal moves and the move. ``state`` is the conversation's, already updated by this
    turn's readings (values stored, a pending check resolved). ``move_scores``: the move head's
    reading, which picks among the legal moves (see :meth:`Decision.choose`). ``gave_values``: the
    message gave a value this turn (an email, an order number), so it answers rather than asks.
    ``asks_how``: the message asks how things work (:func:`bot.text.asks_how`), so an intent's
    needs are not asked for: "can I get a refund if I cancel in the first 14 days?" is a question
    about refunds, not one whose order number matters. ``alone``: it asks for something to go
    through alone (:func:`bot.text.goes_alone`) or tells of one that already happened
    (:func:`bot.text.tells_done`), so an intent with an outcome is served, not qualified: "is
    there a recorded demo I can watch on my own?" and "the demo you gave us was great" are no
    demo lead. ``person_named``: the message names a person or a way to be contacted
    (:func:`bot.text.names_person`); without one, an unsure read of a hand-off is no reason to
    hand off or to ask "did you mean: a person?"."""
    if scope["verdict"] == "out":
        return Decision(
            ["decline"], f"scope: {scope['rule']}", template=scope.get("template") or "decline"
        ).choose()
    answer = intent_read["answer"]
    intent = pack.intent(answer) if answer and intent_read["outcome"] == "act" else None
    if intent and intent.move == "handoff":
        return Decision(["handoff"], HANDOFF_WHEN_ASKED).choose()
    if intent and intent.move == "stop":
        return Decision(["stop"], "hard rule: stop after a no").choose()
    if state.get("offered_person") == "accepted":
        return Decision(["handoff"], HANDOFF_ACCEPTED).choose()
    check = state.get("check")
    if check:
        return value_check(check).choose()
    hostile = sentiment_read["outcome"] == "act" and sentiment_read["answer"] == "hostile"
    blocked, resumes = _selling_blocks(state, intent, hostile)
    decision = _playbook(
        pack, state, scope, intent, intent_read, blocked, gave_values, asks_how, alone, person_named
    )
    decision.resumes = resumes
    offered = state.get("offered_person") == "declined"  # once is enough: no nagging
    if hostile and not offered and (decision.legal[0] in _ASKING or intent is None):
        decision = Decision(["acknowledge"], ACKNOWLEDGE_UPSET, template="acknowledge")
    no_signup = sentiment_read.get("score", 0.0) < pack.low_sentiment or (
        seq - state.get("last_signup_seq", -10_000) <= pack.signup_cooldown_turns
    )
    if blocked:
        decision.legal = [m for m in decision.legal if m not in SELLING]
        decision.rule += "; hard rule: " + ", ".join(blocked)
    if no_signup and "ask_signup" in decision.legal:
        decision.legal.remove("ask_signup")
        decision.rule += "; hard rule: no signup ask at low sentiment or too soon"
    return decision.choose(move_scores, pack.gates["policy"])


def _selling_blocks(
    state: ConversationState, intent: Intent | None, hostile: bool
) -> tuple[list[str], bool]:
    """The hard rules that take selling off the table, and whether a no is lifted: "no selling
    after a no" never blocks what the customer asks for themselves ("actually, a demo?")."""
    blocked: list[str] = []
    own_request = bool(intent and intent.outcome)
    if state.get("stopped") and not own_request:
        blocked.append("no selling after a no")
    if hostile:
        blocked.append("no selling to a hostile visitor")
    return blocked, bool(state.get("stopped") and own_request and not hostile)


def _playbook(
    pack: Pack,
    state: ConversationState,
    scope: Scope,
    intent: Intent | None,
    intent_read: Read,
    blocked: list[str],
    gave_values: bool = False,
    asks_how: bool = False,
    alone: bool = False,
    person_named: bool = True,
) -> Decision:
    """The outcome table and the intents' own moves, before the hard rules narrow them."""
    pending = pack.intent(state.get("pending_intent") or "")
    if intent and intent.outcome and alone:
        decision = Decision(
            [pack.default_move, "handoff"],
            f"intent {intent.name} asked for nothing to be arranged (something to go through "
            f"alone, or one already had): {pack.default_move}, nothing qualified",
        )
    elif intent and intent.outcome and not blocked:
        decision = _qualify(pack, state, intent.outcome, intent.needs)
        if state.get("stopped"):
            decision.rule += f"; the customer asked for {intent.outcome} themselves after a no"
    elif intent:
        decision = _serve(pack, state, intent, blocked, pending=False, asks_how=asks_how)
    elif state.get("outcome") and not blocked and scope.get("question"):
        decision = Decision(
            [pack.default_move, "handoff"], "a question mid-qualification: answer it, then resume"
        )
    elif state.get("outcome") and not blocked:
        decision = _qualify(pack, state, state.get("outcome") or "", [])
    elif pending:
        decision = _serve(pack, state, pending, blocked, pending=True)
    elif intent_read["outcome"] == "unsure" and intent_read["answer"] not in (None, "none"):
        decision = _unsure_intent(pack, state, intent_read, gave_values, person_named)
    else:
        decision = Decision([pack.default_move, "handoff"], "no confident intent: playbook default")
    return decision


def _serve(
    pack: Pack,
    state: ConversationState,
    intent: Intent,
    blocked: list[str],
    pending: bool,
    asks_how: bool = False,
) -> Decision:
    """An intent's own move, once the slots it needs are known (an order number first); a
    question about how things work gets the move at once, with nothing asked."""
    move = intent.move or pack.default_move
    if blocked and (move in SELLING or intent.outcome):
        # Selling is off: answer what was asked, and gather nothing for a sale.
        return Decision(["answer", "handoff"], f"intent {intent.name} would sell; answer instead")
    if asks_how and intent.needs:
        return Decision(
            [move, "handoff"],
            f"intent {intent.name} asked how it works: {move}, nothing asked",
            template=intent.template,
        )
    missing = _missing(pack, state, intent.needs)
    if missing:
        rule = f"intent {intent.name} needs {', '.join(missing)}"
        return _ask_missing(pack, state, missing, rule, intent=intent.name)
    decision = Decision(
        [move, "handoff"], f"intent {intent.name} calls for {move}", template=intent.template
    )
    if pending:
        decision.rule += " now that " + ", ".join(intent.needs) + " is known"
        decision.question = state.get("pending_question")
    return decision


def _missing(pack: Pack, state: ConversationState, needs: list[str]) -> list[str]:
    known = state.get("values", {})
    return [s for s in needs if s not in known and not _alternative_known(pack, s, known)]


def value_check(check: ValueCheck) -> Decision:
    """A value waiting for the customer's yes: check it, ask once more, then hand off."""
    if check.get("tries", 0) >= 2:
        return Decision(["handoff"], "value check still unsure after asking twice: hand off")
    rule = "value unsure: check the likeliest candidate"
    if check.get("tries", 0) == 1:
        rule = "yes/no unsure: ask the check again, once"
    return Decision(
        ["confirm", "handoff"],
        rule,
        slot=check["slot"],
        template="check_value",
        value=check["value"],
    )


def _unsure_intent(
    pack: Pack,
    state: ConversationState,
    intent_read: Read,
    gave_values: bool = False,
    person_named: bool = True,
) -> Decision:
    """Offer the likeliest two, only those at or above the declared ``clarifyFloor``: a 1.4%
    option is not a plausible thing to ask about. A person is never offered as a runner-up ("did
    you mean support or a person?" to "I'm locked out of my account"): a customer can ask for one
    at any turn, and a request for one is read on its own (the head, and the lines nearest).
    When a person is the likeliest, at :data:`PERSON_LIKELY` or more (and the head does not find
    the message novel), the playbook prefers to hand off and
    the move head keeps the clarify question only when it is sure: "did you mean: a person?"
    to "I'd like to escalate this to your supervisor" asks what was said. Not when the message
    gave a value ("my email is dana@example.com" reads as a person, being about one): it answers.
    Nor when it names no person at all (``person_named``): the head read something else."""
    floor = pack.gates["clarifyFloor"]
    ranked = intent_read.get("ranking", [])[:2]
    options = [r["name"] for r in ranked if r["name"] != "none" and r["score"] >= floor]
    novel = intent_read.get("reason") == "novel"  # "Dear hiring manager, ...": not a request
    if (
        options
        and _hands_off(pack, options[0])
        and ranked[0]["score"] >= PERSON_LIKELY
        and not novel
        and not gave_values
        and person_named
    ):
        return Decision(
            ["handoff", "clarify"],
            f"intent unsure, but a person more likely than not ({ranked[0]['score']:.2f})",
            options=options,
        )
    # A message that gave a value is not asked whether it wanted a person at all.
    keep = 0 if gave_values or not person_named else 1
    options = options[:keep] + [o for o in options[keep:] if not _hands_off(pack, o)]
    if not options:
        return Decision(
            [pack.default_move, "handoff"],
            f"intent unsure and no option reaches the clarify floor {floor}: playbook default",
        )
    calls = {_calls_for(pack, name) for name in options}
    if len(calls) == 1 and None not in calls and (len(options) > 1 or calls == {"answer"}):
        # Asking "did you mean X or Y?" is pointless when X and Y lead to the same move, and
        # "did you mean X?" when X is a question to answer: the answer path checks its facts.
        shared = str(calls.pop())
        return Decision(
            [shared, "handoff"],
            f"intent unsure between {' and '.join(options)}; each calls for {shared}",
        )
    if state.get("clarify_misses", 0) >= 1:
        return Decision(["handoff"], "intent still unsure after offering the likeliest: hand off")
    return Decision(
        ["clarify", "handoff"], "intent unsure: offer the likeliest few", options=options
    )


def _hands_off(pack: Pack, name: str) -> bool:
    intent = pack.intent(name)
    return intent is not None and intent.move == "handoff"


def _qualify(
    pack: Pack, state: ConversationState, outcome: str, intent_needs: list[str]
) -> Decision:
    """The outcome rule table: ask for what blocks ``outcome``, or close it once qualified.

    A slot asked for and still missing is asked again once, then its alternative is tried (an
    email or else a phone number), then the conversation goes to a person.
    """
    rule = _outcome_rule(pack, outcome)
    needs = list(dict.fromkeys([*(rule.needs if rule else []), *intent_needs]))
    missing = _missing(pack, state, needs)
    reason = rule.reason if rule else f"outcome {outcome}"
    if not missing:
        return Decision(
            ["propose"],
            f"outcome table: {outcome} qualified ({reason})",
            outcome=outcome,
            template=f"propose_{outcome}",
        )
    blocked_on = f"outcome table: {outcome} blocked on {', '.join(missing)} ({reason})"
    return _ask_missing(pack, state, missing, blocked_on, outcome=outcome)


def _ask_missing(
    pack: Pack,
    state: ConversationState,
    missing: list[str],
    rule: str,
    outcome: str | None = None,
    intent: str | None = None,
) -> Decision:
    """Ask for the first missing slot; once more if it was missed; then its alternative; then
    a person."""
    slot = missing[0]
    misses = state.get("slot_misses", {})
    if misses.get(slot, 0) == 1:
        rule += "; value missing: ask again, once"
        return Decision(
            ["ask", "handoff"],
            rule,
            slot=slot,
            outcome=outcome,
            intent=intent,
            template="ask_again",
        )
    if misses.get(slot, 0) >= 2:
        declared = pack.slot(slot)
        alternative = declared.alternative if declared else None
        known = state.get("values", {})
        if alternative and alternative not in known and not misses.get(alternative, 0):
            rule += f"; try the alternative {alternative}"
            return Decision(
                ["ask", "handoff"], rule, slot=alternative, outcome=outcome, intent=intent
            )
        return Decision(["handoff"], rule + "; value still missing after asking twice")
    return Decision(["ask", "handoff"], rule, slot=slot, outcome=outcome, intent=intent)


def _alternative_known(pack: Pack, slot: str, known: dict[str, Any]) -> bool:
    """A need is met by its declared alternative (a phone number instead of an email)."""
    declared = pack.slot(slot)
    return bool(declared and declared.alternative and declared.alternative in known)
