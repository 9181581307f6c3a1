"""The turn's stages called directly on the sample pack, with no App, store or model: the scope
check, the keyword router, gates, values (offline and model-read), the playbook's hard rules and
outcome table, follow-ups after unsure readings, the forecast, the reply gate and deterministic
acts. Each test pins a rule an end-to-end test in test_agent.py (or test_repeat.py) checks through
a whole App; those keep checking the wiring, these say which stage broke.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.errors import ProviderError
from bot.extend.provider import ModelProvider, Prompt, Response
from bot.extend.retriever import LexicalRetriever
from bot.packs import Pack
from bot.turn import act, followups, forecast, gates, replygate, scope, valuereader, values
from bot.turn.decide import HANDOFF_WHEN_ASKED, Decision, MoveScores, decide
from bot.turn.router import KeywordRouter

# --- helpers: the readings the agent would pass to decide ---------------------------------------


def intent_read(pack: Pack, text: str) -> dict[str, Any]:
    router = KeywordRouter(pack)
    answer, confidence, ranked = router.intent(text)
    ranking = [{"name": r.name, "score": round(r.score, 3)} for r in ranked[:3]]
    threshold = pack.gates["intent"]
    read = gates.read("intent", router.version, answer, confidence, "intent", threshold)
    read["ranking"] = ranking
    return dict(read)


def sentiment_read(pack: Pack, text: str) -> dict[str, Any]:
    label, confidence, score = KeywordRouter.sentiment(text)
    threshold = pack.gates["sentiment"]
    version = "keyword-router"
    read = gates.read("sentiment", version, label, confidence, "sentiment", threshold)
    read["score"] = score
    return dict(read)


def turn(pack: Pack, text: str, state: dict[str, Any] | None = None, seq: int = 1) -> Decision:
    """decide() as the agent calls it, on keyword readings of ``text``."""
    state = {"values": {}} if state is None else state
    known = set(state["values"])
    return decide(
        pack,
        state,
        scope.check_scope(pack, text, known),
        intent_read(pack, text),
        sentiment_read(pack, text),
        seq,
    )


# --- scope --------------------------------------------------------------------------------------


def test_scope_declines_a_declared_out_of_scope_topic(pack: Pack) -> None:
    verdict = scope.check_scope(pack, "what's the weather in Paris", set())
    assert (verdict["verdict"], verdict["rule"]) == ("out", "out_of_scope:weather")
    medical = scope.check_scope(pack, "what is the diagnosis for these symptoms", set())
    assert medical["template"] == "decline_medical"


def test_scope_keeps_a_message_the_pack_also_covers(pack: Pack) -> None:
    verdict = scope.check_scope(pack, "does monitor alert me about the weather?", set())
    assert verdict["verdict"] == "in" and verdict["rule"].startswith("declared:monitor")
    assert verdict["question"] is True


def test_scope_asks_for_an_input_the_request_needs(pack: Pack) -> None:
    verdict = scope.check_scope(pack, "where is my order", set())
    assert verdict == {
        "verdict": "needs_input",
        "rule": "order_status needs order_id",
        "slot": "order_id",
        "question": True,
        # The declared rules alone: the domain check (bot.turn.domain) did not run.
        "score": None,
        "threshold": None,
    }
    assert scope.check_scope(pack, "where is my order", {"order_id"})["verdict"] == "in"
    assert scope.check_scope(pack, "purple elephants", set())["rule"] == "no_declared_match"


# --- the keyword router -------------------------------------------------------------------------


def test_router_is_confident_on_one_declared_phrase_and_splits_on_two(pack: Pack) -> None:
    router = KeywordRouter(pack)
    assert router.intent("I want to talk to a person")[:2] == ("human", 0.95)
    assert router.intent("purple elephants dance") == ("none", 0.5, [])
    # Two intents' phrases compete: below the 0.9 intent gate, so the gate says unsure.
    name, confidence, ranked = router.intent("do you integrate with github and what does it cost")
    assert name == "product_question" and confidence < pack.gates["intent"]
    assert [r.name for r in ranked[:2]] == ["product_question", "pricing"]
    assert router.version.startswith("keyword-router@")


def test_router_reads_sentiment_by_declared_words() -> None:
    assert KeywordRouter.sentiment("this is a scam") == ("hostile", 0.9, -1.0)
    assert KeywordRouter.sentiment("ok") == ("neutral", 0.6, 0.0)
    label, _, score = KeywordRouter.sentiment("it is broken and slow")
    assert label == "negative" and score == -1.0
    assert KeywordRouter.sentiment("thanks, great help")[0] == "positive"


# --- gates --------------------------------------------------------------------------------------


def test_gate_outcomes_act_skip_and_unsure() -> None:
    assert gates.outcome("demo", 0.95, 0.9) == "act"
    assert gates.outcome("none", 0.95, 0.9) == "skip" and gates.outcome(None, 0.9, 0.9) == "skip"
    assert gates.outcome("demo", 0.89, 0.9) == "unsure"
    # yesNo is on |2p - 1|: 0.6 means p >= 0.8 or p <= 0.2.
    assert gates.yes_no_outcome(0.8, 0.6) == ("act", pytest.approx(0.6))
    assert gates.yes_no_outcome(0.15, 0.6)[0] == "act"
    assert gates.yes_no_outcome(0.7, 0.6)[0] == "unsure"
    read = dict(gates.read("intent", "v1", "demo", 0.912345, "intent", 0.9))
    read["ranking"] = []
    assert read == {
        "head": "intent",
        "version": "v1",
        "answer": "demo",
        "confidence": 0.9123,
        "gate": "intent",
        "threshold": 0.9,
        "outcome": "act",
        "ranking": [],
    }


# --- values -------------------------------------------------------------------------------------


def test_values_read_emails_unprompted_and_numbers_only_when_asked(pack: Pack) -> None:
    found = values.propose(pack, "we are 12 people, mail dana@example.com", None)
    assert [(p.slot, p.value) for p in found] == [("email", "dana@example.com")]
    asked = values.propose(pack, "about 12", "team_size")
    assert [(p.slot, p.value, p.confidence) for p in asked] == [("team_size", "12", 0.95)]
    # A text slot takes the bare answer to our question, never a question back.
    answer = values.propose(pack, "We want uptime checks for our API.", "use_case")
    assert [(p.slot, p.value) for p in answer] == [
        ("use_case", "We want uptime checks for our API")
    ]
    assert values.propose(pack, "does it do uptime checks?", "use_case") == []


def test_a_bare_order_number_is_surer_than_one_in_a_sentence(pack: Pack) -> None:
    [bare] = values.propose(pack, "5843990922", "order_id")
    [buried] = values.propose(pack, "it was 5843990922 I think", "order_id")
    assert bare.confidence == values.BARE_ANSWER_CONFIDENCE
    assert buried.confidence == values.BURIED_CONFIDENCE < pack.gates["value"]


def test_read_values_keeps_only_verbatim_new_confident_values(pack: Pack) -> None:
    proposals = [
        values.Proposal("use_case", "monitoring our public APIs", 0.99),
        values.Proposal("team_size", "12", 0.96),
        values.Proposal("email", "dana@example.com", 0.97),
        values.Proposal("order_id", "5843990922", 0.7),
    ]
    texts = ["we are 12 people, dana@example.com", "order 5843990922"]
    entries = values.read_values(pack, proposals, texts, {"email": "x@y.z"}, 0.9)
    by_slot = {e["slot"]: e for e in entries}
    assert by_slot["use_case"]["rejected"] == [
        {"value": "monitoring our public APIs", "reason": "not verbatim in customer text"}
    ]
    assert (by_slot["team_size"]["outcome"], by_slot["team_size"]["value"]) == ("act", "12")
    assert by_slot["email"]["rejected"][0]["reason"] == "already known"
    assert by_slot["order_id"]["outcome"] == "unsure"
    assert by_slot["order_id"]["rejected"][0]["reason"] == "below value gate"


def test_a_model_reading_is_parsed_strictly(pack: Pack) -> None:
    raw = (
        'Sure: {"values": [{"slot": "email", "value": " dana@example.com ", "confidence": 1.5},'
        ' {"slot": "salary", "value": "a lot"}, {"slot": "team_size", "value": ""},'
        ' {"slot": "use_case", "value": "uptime", "confidence": "high"}]}'
    )
    proposals = valuereader.parse(pack, raw)
    assert [(p.slot, p.value, p.confidence) for p in proposals] == [
        ("email", "dana@example.com", valuereader.MAX_MODEL_CONFIDENCE),
        ("use_case", "uptime", 0.5),
    ]
    assert valuereader.parse(pack, "Sure! Here you go: {values: [oops") == []
    prompt = valuereader.prompt_for(pack, "12 of us", [], "team_size")
    assert prompt.purpose == "values" and "just asked for team_size" in prompt.system


# --- decide: hard rules and the outcome table ---------------------------------------------------


def test_out_of_scope_forces_decline(pack: Pack) -> None:
    decision = turn(pack, "what's the weather in Paris")
    assert (decision.legal, decision.move, decision.template) == (["decline"], "decline", "decline")
    assert decision.why == "forced: the only legal move"


def test_asking_for_a_person_is_a_hard_rule(pack: Pack) -> None:
    decision = turn(pack, "I want to talk to a person")
    assert (decision.legal, decision.rule, decision.move) == (
        ["handoff"],
        HANDOFF_WHEN_ASKED,
        "handoff",
    )
    assert turn(pack, "no thanks, not interested").rule == "hard rule: stop after a no"


def test_a_demo_asks_its_blocking_slots_then_proposes(pack: Pack) -> None:
    first = turn(pack, "I'd like a demo")
    assert (first.move, first.slot, first.outcome) == ("ask", "use_case", "demo")
    assert "blocked on use_case, team_size, email" in first.rule
    known = {"use_case": "uptime", "team_size": "12", "email": "dana@example.com"}
    state = {"values": known, "outcome": "demo"}
    last = turn(pack, "that's it", state)
    assert (last.legal, last.move, last.template) == (["propose"], "propose", "propose_demo")
    assert last.rule.startswith("outcome table: demo qualified")


def test_a_phone_number_meets_the_need_for_an_email(pack: Pack) -> None:
    state = {"values": {"phone": "+44 20 7946 0958"}}
    assert turn(pack, "can I try it", state).legal == ["propose"]


def test_no_selling_after_a_no_unless_asked_or_to_a_hostile_visitor(pack: Pack) -> None:
    # The customer's own request after a no is served, and lifts the no ...
    after_no = turn(pack, "can I get a demo", {"values": {}, "stopped": True})
    assert (after_no.move, after_no.slot, after_no.resumes) == ("ask", "use_case", True)
    assert "the customer asked for demo themselves after a no" in after_no.rule
    # ... but the agent never sells on its own after a no.
    known = {"use_case": "uptime", "team_size": "12", "email": "dana@example.com"}
    unprompted = turn(pack, "ok", {"values": known, "outcome": "demo", "stopped": True})
    assert "no selling after a no" in unprompted.rule
    assert unprompted.move not in ("propose", "ask_signup") and not unprompted.resumes
    hostile = turn(pack, "give me a demo, you idiot")
    assert "no selling to a hostile visitor" in hostile.rule and hostile.move == "answer"


def test_a_missed_slot_is_asked_again_then_its_alternative_then_a_person(pack: Pack) -> None:
    base = {"values": {}, "outcome": "trial"}
    again = turn(pack, "hmm", {**base, "slot_misses": {"email": 1}})
    assert (again.slot, again.template) == ("email", "ask_again")
    alternative = turn(pack, "hmm", {**base, "slot_misses": {"email": 2}})
    assert alternative.slot == "phone" and "try the alternative phone" in alternative.rule
    person = turn(pack, "hmm", {**base, "slot_misses": {"email": 2, "phone": 1}})
    assert person.legal == ["handoff"]


def test_an_unsure_value_is_checked_then_handed_off(pack: Pack) -> None:
    check = {"slot": "order_id", "value": "5843990922", "tries": 0, "asked": True}
    first = turn(pack, "hmm", {"values": {}, "check": check})
    assert (first.move, first.value, first.template) == ("confirm", "5843990922", "check_value")
    gave_up = turn(pack, "hmm", {"values": {}, "check": {**check, "tries": 2}})
    assert gave_up.legal == ["handoff"]


def test_a_move_head_picks_only_when_sure_among_legal_moves() -> None:
    sure = Decision(["answer", "handoff"], "r").choose(
        MoveScores("m1", [("handoff", 0.95), ("answer", 0.05)])
    )
    assert (sure.move, sure.escalate) == ("handoff", False)
    # Mass on a forbidden move counts for the playbook's preference (answer here).
    forbidden = Decision(["answer", "handoff"], "r").choose(
        MoveScores("m1", [("propose", 0.6), ("answer", 0.35), ("handoff", 0.05)])
    )
    assert forbidden.move == "answer" and not forbidden.escalate
    unsure = Decision(["answer", "handoff"], "r").choose(
        MoveScores("m1", [("handoff", 0.55), ("answer", 0.45)])
    )
    assert (unsure.move, unsure.escalate) == ("answer", True)
    assert unsure.read is not None and unsure.read["outcome"] == "unsure"
    empty = Decision([], "r").choose()
    assert empty.legal == ["handoff"] and "nothing else legal" in empty.rule


# --- follow-ups after unsure readings -----------------------------------------------------------


def test_a_value_check_answered_yes_stores_the_value_and_no_counts_a_miss() -> None:
    def checking() -> dict[str, Any]:
        check = {"slot": "order_id", "value": "5843990922", "tries": 0, "asked": True}
        return {"values": {}, "check": check}

    yes = checking()
    read, entry = followups.resolve_check(yes, "yes, that's right", 0.6, 3)
    assert read is not None and entry is not None and entry["outcome"] == "act"
    assert yes["values"]["order_id"]["value"] == "5843990922" and "check" not in yes
    no = checking()
    _, entry = followups.resolve_check(no, "no, that's wrong", 0.6, 3)
    assert entry is not None and entry["rejected"][0]["reason"] == "the customer said it is wrong"
    assert no["slot_misses"] == {"order_id": 1} and "check" not in no
    assert followups.resolve_check({"values": {}}, "yes", 0.6, 3) == (None, None)


def test_an_unsure_answer_to_our_question_opens_a_check() -> None:
    state: dict[str, Any] = {"values": {}, "asked_slot": "order_id"}
    entry = {"slot": "order_id", "outcome": "unsure", "rejected": [{"value": "58439"}]}
    followups.note_values(state, [entry], other_request=False, checked=False)
    assert state["check"] == {"slot": "order_id", "value": "58439", "tries": 0, "asked": False}
    missed: dict[str, Any] = {"values": {}, "asked_slot": "email"}
    followups.note_values(missed, [], other_request=False, checked=False)
    assert missed["slot_misses"] == {"email": 1}
    after = Decision(["ask"], "r", move="ask", slot="email", outcome="trial")
    followups.after_move(missed, after, "can I try it")
    assert (missed["asked_slot"], missed["outcome"]) == ("email", "trial")


# --- forecast -----------------------------------------------------------------------------------


def test_forecast_is_unvalidated_and_rises_with_qualification(pack: Pack) -> None:
    first = forecast.forecast(pack, {"values": {}}, "answer", 0.0)
    assert (first["stage"], first["validated"]) == ("discover", False)
    qualifying = {"values": {"use_case": "x", "team_size": "12"}, "outcome": "demo"}
    middle = forecast.forecast(pack, qualifying, "ask", 0.0)
    last = forecast.forecast(pack, qualifying, "propose", 0.0)
    assert (middle["stage"], last["stage"]) == ("qualify", "propose")
    assert first["p_convert"] < middle["p_convert"] < last["p_convert"]
    stopped = forecast.forecast(pack, {"values": {}, "stopped": True}, "stop", 0.0)
    assert stopped["p_convert"] < first["p_convert"]


# --- the reply gate -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("draft", "reason"),
    [
        ("Yes, see [faq-made-up].", "not retrieved this turn"),
        ("Docker builds cost $42 a month [faq-docker].", "price"),
        ("We guarantee Docker works [faq-docker].", "guarantee"),
        ("Docker is better than Globex [faq-docker].", "Globex"),
        ("Docker? Really? [faq-docker]", "questions"),
        ("[faq-docker]", "empty"),
    ],
)
def test_the_reply_gate_refuses_each_broken_rule(pack: Pack, draft: str, reason: str) -> None:
    result = replygate.check(draft, {"faq-docker"}, pack.excluded_names)
    assert not result.passed and any(reason in r for r in result.reasons)


def test_the_reply_gate_passes_a_grounded_draft_and_strips_its_citations(pack: Pack) -> None:
    draft = "Yes, Pipelines runs Docker builds natively [faq-docker]. Want a demo?"
    result = replygate.check(draft, {"faq-docker"}, pack.excluded_names)
    assert result.passed and result.citations == ["faq-docker"]
    strict = replygate.check(draft, {"faq-docker"}, [], require_citations=True)
    assert not strict.passed and "without a resolved citation" in strict.reasons[0]
    stripped = "Yes, Pipelines runs Docker builds natively. Want a demo?"
    assert replygate.strip_citations(draft) == stripped


# --- act: deterministic moves never reach a model -----------------------------------------------


class NoModel(ModelProvider):
    """A provider a deterministic move must never call."""

    name = "no-model"

    async def execute(self, prompt: Prompt) -> Response:
        raise ProviderError(f"a deterministic move called the model ({prompt.purpose})")


@pytest.fixture
def actor(pack: Pack) -> act.Actor:
    return act.Actor(pack, NoModel(), LexicalRetriever(pack), search_steps=1)


async def test_deterministic_moves_come_from_templates(pack: Pack, actor: act.Actor) -> None:
    decline = await actor.act(turn(pack, "what's the weather in Paris"), "", [], "en")
    assert "only help with questions about Acme Cloud" in decline.replies[0]["text"]
    ask = await actor.act(turn(pack, "I'd like a demo"), "", [], "en")
    assert ask.replies[0]["text"] == pack.slot("use_case").question  # type: ignore[union-attr]
    confirm = Decision(["confirm"], "r", move="confirm", slot="email", value="d@x.io")
    checked = await actor.act(confirm, "", [], "en")
    assert checked.replies[0]["text"] == "Just to check, is your email address d@x.io?"
    state = {"values": {"use_case": "u", "team_size": "1", "email": "e@x.io"}, "outcome": "demo"}
    propose = await actor.act(turn(pack, "ok", state), "", [], "en")
    assert propose.replies[-1] == {
        "type": "card",
        "card": "contact",
        "contact": "sales@acme.example",
        "outcome": "demo",
    }
    for acted in (decline, ask, checked, propose):
        assert acted.model_calls == [] and acted.escalate is None


async def test_an_answer_with_nothing_found_is_noted_not_invented(
    pack: Pack, actor: act.Actor
) -> None:
    question = "does the mobile app support offline mode"
    acted = await actor.act(Decision(["answer"], "r", move="answer"), question, [], "en")
    assert acted.unanswered == question and acted.facts == [] and acted.model_calls == []
    assert acted.replies[0]["text"].startswith("I don't have a confirmed answer")
