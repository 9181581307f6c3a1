"""Typos, follow-ups and other languages, through the REST API on the sample pack: a misspelled
question finds its entry, a follow-up is searched with the question before, a question in
another language is matched to the FAQ across languages (or told honestly, in its language, that
answers come from English pages, with a person offered), and never answered from an unrelated
passage. The parts (the typo channel, the follow-up reading) are checked on their own first."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from bot.app import App
from bot.extend.retriever import Fact
from bot.packs import Pack
from bot.text import one_typo_apart, respell
from bot.turn.followup_query import about_the_same, refers_back, retrieval_query
from tests.test_api import new_conversation, say


async def _turns(client: TestClient, *texts: str) -> dict[str, Any]:
    """Send ``texts`` in one conversation; the last turn's body."""
    cid, auth = await new_conversation(client)
    body: dict[str, Any] = {}
    for n, text in enumerate(texts):
        resp = await say(client, cid, auth, text, f"m{n}")
        assert resp.status == 200
        body = await resp.json()
    return body


def _cited(body: dict[str, Any]) -> list[str]:
    return [c["key"] for r in body["replies"] for c in r.get("citations", [])]


def _check(body: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in body["turn"]["reads"] if r["head"] == "answerability")


def test_typos_are_read_as_the_words_they_misspell(pack: Pack) -> None:
    from gatebot_knowledge.lexical import Bm25Index
    from gatebot_knowledge.passages import pack_passages

    lexical = Bm25Index([p.lexical for p in pack_passages(pack)])
    assert lexical.corrections("whats teh pricng for monitr") == {
        "pricng": "pric",
        "monitr": "monitor",
    }
    # A real word the pack lacks is not a typo of one it has; short words are left alone.
    assert lexical.corrections("give me a recipe for banana bread") == {}
    assert lexical.corrections("how long are logs kept") == {}
    assert lexical.corrections("how many roles are there") == {}  # a stop word, not "three"
    # A common word the pack never writes is still no typo: "there" is not "three".
    assert lexical.corrections("is there a free trial for a team of 40?") == {}
    assert one_typo_apart("slakc", "slack") and one_typo_apart("monitr", "monitor")
    assert not one_typo_apart("xmonitor", "monitor") and not one_typo_apart("slack", "slack")
    assert respell("is there a fre trail", frozenset({"trial"})) == "is there a fre trial"
    # A word English knows is a word the pack does not say, not a typo of one it does...
    assert lexical.corrections("which country is our data stored in?") == {}
    assert lexical.corrections("can a feature branch reuse the cache?") == {}
    assert lexical.corrections("can our status page use a custom domain?") == {}
    # ...unless it is the pack's word with two neighbouring letters swapped.
    assert lexical.corrections("is there a fre trail") == {"trail": "trial"}


def test_knowledge_search_finds_the_entry_a_typo_asks(pack: Pack) -> None:
    from gatebot_knowledge.retriever import KnowledgeRetriever

    retriever = KnowledgeRetriever(pack)
    retriever.build()
    best = retriever.search_sync("whats teh pricng for monitr", 3, gate=False)[0]
    assert best.key == "faq-pricing"


def test_a_follow_up_refers_back_unless_it_names_something_new(pack: Pack) -> None:
    assert refers_back(pack, "how much is it?")
    assert refers_back(pack, "and what about the other plan?")
    assert not refers_back(pack, "what about kubernetes?")  # nothing refers back
    assert not refers_back(pack, "does it work with kubernetes?")  # a subject the pack lacks
    state: Any = {"values": {}, "last_question": "can Monitor send alerts to Slack?"}
    # The subject, not the whole question: joined whole, the Slack answer would come back.
    assert retrieval_query(pack, "how much is it?", state) == (
        "Acme Monitor how much is it?",
        "follow-up",
    )
    assert retrieval_query(pack, "is there a free trial?", state)[1] == "message"


async def test_a_misspelled_question_is_answered_from_its_entry(client: TestClient) -> None:
    body = await _turns(client, "can monitr send alerst to slakc")
    turn = body["turn"]
    assert turn["scope"]["verdict"] == "in" and turn["scope"]["rule"].startswith("spelled:")
    assert _cited(body) == ["faq-slack-alerts"]
    check = _check(body)
    assert check["outcome"] == "act" and check["query_from"] == "message"
    assert "monitor" in check["query"] and "slack" in check["query"]


async def test_a_follow_up_is_searched_with_the_question_before(client: TestClient) -> None:
    body = await _turns(client, "where is my data stored?", "is it encrypted?")
    assert body["turn"]["scope"]["rule"] == "follow-up"
    assert _cited(body) == ["faq-data-location"]
    check = _check(body)
    assert check["query_from"] == "follow-up"
    # Joined with the question before (the entry's own question, read alone, may then vouch).
    assert check["query"] in (
        "where is my data stored? is it encrypted?",
        "where is my data stored?",
    )
    # Something new after "it" is searched alone, and the Docker answer is not given for it.
    body = await _turns(client, "do you support docker builds?", "does it work with kubernetes?")
    assert _check(body)["query_from"] == "message" and _cited(body) == []


async def test_a_follow_up_the_subject_misleads_is_searched_alone(client: TestClient) -> None:
    # Joined with "Acme Pipelines", "how much is it?" finds the Pipelines document, which names
    # no price. The joined query read without the product's name finds the pricing entry, which
    # speaks for every product (the ninth round's every-product reading); before that reading,
    # the follow-up searched alone found it. (After a Monitor question the joined query finds the
    # pricing entry itself, asked "How much is Monitor per month?".)
    body = await _turns(client, "does Pipelines support Docker builds?", "how much is it?")
    check = _check(body)
    assert check["outcome"] == "act" and check["query_from"] == "follow-up"
    assert "+every-product" in check["version"] and _cited(body) == ["faq-pricing"]


def test_a_follow_up_is_never_answered_alone_about_another_product(pack: Pack) -> None:
    slack = next(
        Fact(f.key, f.answer, "faq", "faq", 1.0, f.question)
        for f in pack.faq
        if f.key == "faq-slack-alerts"
    )
    price = next(
        Fact(f.key, f.answer, "faq", "faq", 1.0, f.question)
        for f in pack.faq
        if f.key == "faq-pricing"
    )
    # The Monitor entry answers "does it alert in slack?" alone, but not after a Pipelines
    # question; the pricing entry names no product and may answer after any.
    assert not about_the_same(pack, slack, "how do pipelines run builds?")
    assert about_the_same(pack, slack, "does Monitor check from many places?")
    assert about_the_same(pack, price, "can Monitor send alerts to Slack?")


async def test_a_question_in_another_language_is_matched_across_languages(
    client: TestClient, app: App
) -> None:
    body = await _turns(client, "¿Cuánto cuesta Acme Cloud?")
    intro, answer = body["replies"][0], body["replies"][1]
    assert intro["text"] == app.pack.template("answer_in_pack_language", "es")
    assert answer["citations"][0]["key"] == "faq-pricing"
    assert _check(body)["version"].startswith("multilingual-use3/es")
    # Not in the pack: said in Spanish, a person offered, nothing cited.
    body = await _turns(client, "¿Tienen una versión local de Monitor?")
    assert body["replies"][0]["text"] == app.pack.template("not_in_knowledge_language", "es")
    card = body["replies"][1]
    assert card["card"] == "offer_person" and card["label"] == "Hablar con una persona"
    assert _cited(body) == [] and body["turn"]["facts"] == []


async def test_without_the_multilingual_encoder_nothing_english_is_cited(
    client: TestClient, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gatebot_knowledge.multilingual.available", lambda: False)
    body = await _turns(client, "Wie setze ich mein Passwort zurück?")
    assert body["replies"][0]["text"] == app.pack.template("not_in_knowledge_language", "de")
    assert body["replies"][1]["card"] == "offer_person"
    assert _cited(body) == [] and _check(body)["outcome"] != "act"


def test_a_keyword_list_matches_as_each_phrase_alone() -> None:
    from bot.text import has_phrase, matching, normalise

    phrases = ["i'm", "don", "don't", "e-mail", "log in", "", "!!", "trial", "free trial", "x86"]
    for text in ["I'm here, don't go", "e-mail me", "log   in please", "free-trial x86_64", ""]:
        n = normalise(text)
        assert matching(n, phrases) == [p for p in phrases if has_phrase(n, p)]
    assert matching(normalise("log   in please"), phrases) == ["log in"]
