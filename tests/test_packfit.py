"""The pack's own calibration of the answerability head (gatebot_knowledge.packfit): placing the
shift from its leave-one-out negatives, the names a pack never says, and both through REST on
the sample pack."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from gatebot_knowledge.packfit import (
    MAX_QUERIES,
    MAX_SHIFT,
    MIN_QUERIES,
    PackFit,
    declared_words,
    fit_pack,
    pack_queries,
    place_shift,
    unseen_names,
)

from bot.packs import load_pack
from tests.conftest import ACME

KNOWN = {w: i for i, w in enumerate(["incid", "timelin", "export", "monitor", "alert", "saml"])}


def test_a_name_the_pack_never_says_is_found() -> None:
    assert unseen_names(KNOWN, "can I export incident timelines to Jira") == ["Jira"]
    assert unseen_names(KNOWN, "is there a pagerduty integration") == ["pagerduty"]
    assert unseen_names(KNOWN, "do you integrate with bitbucket?") == ["bitbucket"]
    assert unseen_names(KNOWN, "is Acme HIPAA compliant?") == ["Acme", "HIPAA"]
    assert unseen_names(KNOWN, "can monitor alert status.example.com") == ["status.example.com"]
    # A domain is read without its top level, and is no compound of a word the pack uses.
    assert unseen_names(KNOWN, "can monitor alert monitor.io") == []
    assert unseen_names(KNOWN, "can monitor alert monitor.example.com") == ["monitor.example.com"]
    # A capital at a sentence's start, a word the pack uses, or one it declares is no name.
    assert unseen_names(KNOWN, "Hello! Can monitor alert us?") == []
    assert unseen_names(KNOWN, "we use SAML for sign-in") == []
    assert unseen_names(KNOWN, "is Acme HIPAA compliant?", frozenset({"acm"})) == ["HIPAA"]


def test_the_shift_keeps_the_highest_negative_under_the_gate() -> None:
    low = [0.1] * MIN_QUERIES + [0.3]
    fit = place_shift(low, 0.6)
    assert 0 < fit.shift <= MAX_SHIFT and fit.queries == MIN_QUERIES + 1
    assert fit.apply(0.3) < 0.6 <= fit.apply(0.5)  # the highest negative stays refused
    # It only ever lowers the bar, and never further than MAX_SHIFT.
    assert place_shift([0.7] * MIN_QUERIES, 0.6).shift == 0.0
    assert place_shift([0.01] * MIN_QUERIES, 0.6).shift == MAX_SHIFT
    # Too few of the pack's own questions: the shipped head stands.
    assert place_shift([0.1] * (MIN_QUERIES - 1), 0.6).shift == 0.0
    assert PackFit().apply(0.42) == 0.42


def test_fit_pack_reads_every_query_once_and_skips_empty_ones() -> None:
    asked: list[str] = []

    def negative(query: str) -> float | None:
        asked.append(query)
        return None if query == "q0" else 0.2

    queries = [f"q{i}" for i in range(MIN_QUERIES + 1)]
    fit = fit_pack(queries, negative, 0.6)
    assert asked == queries and fit.queries == MIN_QUERIES and fit.shift > 0
    asked.clear()
    fit_pack([f"q{i}" for i in range(1, 3 * MAX_QUERIES)], negative, 0.6)
    assert len(asked) == MAX_QUERIES  # a large pack: every n-th question, at most MAX_QUERIES


def test_the_sample_pack_gives_its_questions_and_keywords() -> None:
    pack = load_pack(ACME)
    queries = pack_queries(pack)
    assert "How do I reset my password?" in queries  # an FAQ question
    assert "which regions does Monitor check from" in queries  # an answering intent's example
    assert "I want to talk to a person" not in queries  # the hand-off intent does not answer
    assert len(queries) >= MIN_QUERIES
    assert {"ci", "api"} <= declared_words(pack)


async def _say(client: TestClient, text: str) -> dict[str, Any]:
    resp = await client.post("/api/conversations")
    body = await resp.json()
    resp = await client.post(
        f"/api/conversations/{body['id']}/messages",
        headers={"Authorization": f"Bearer {body['token']}"},
        json={"text": text, "client_message_id": "m1"},
    )
    assert resp.status == 200
    out: dict[str, Any] = await resp.json()
    return out


def _read(body: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in body["turn"]["reads"] if r["head"] == "answerability")


async def test_what_the_shipped_head_refused_is_answered(client: TestClient) -> None:
    # The shipped head read 0.58 (under the gate 0.6); the sample pack's fit lifted it to 0.71.
    # Since the pack says how its entries are asked ("Are Docker layers cached between
    # builds?"), the fit's shift there is 0 and the FAQ match answers it.
    body = await _say(client, "do docker layers stay cached between pipeline runs")
    read = _read(body)
    assert read["outcome"] == "act" and "+faq-match" in read["version"]
    assert body["replies"][0]["citations"][0]["key"] == "faq-docker"


async def test_a_sure_faq_match_far_ahead_in_the_ranking_answers(client: TestClient) -> None:
    # The Docker entry leads the next document by only 0.06 in cosine (under FAQ_MATCH_CLEAR)
    # but by more than FAQ_MATCH_LEAD in the hybrid ranking, with a match at 0.995: answered
    # from the entry.
    body = await _say(client, "our repo has a Dockerfile, can pipelines build it?")
    read = _read(body)
    assert read["outcome"] == "act" and "+faq-match" in read["version"]
    assert body["replies"][0]["citations"][0]["key"] == "faq-docker"


async def test_shorthand_is_no_unseen_name(client: TestClient) -> None:
    # "PRs" is written out as the entry writes it ("pull requests"), so it names nothing unseen.
    body = await _say(client, "will pipelines show the build result on my github PRs?")
    read = _read(body)
    assert read["outcome"] == "act" and "+unseen-name" not in read["version"]
    assert body["replies"][0]["citations"][0]["key"] == "faq-github"


async def test_a_question_naming_what_the_pack_never_says_is_refused(client: TestClient) -> None:
    body = await _say(client, "is there a pagerduty integration")
    read = _read(body)
    assert read["outcome"] != "act" and "+unseen-name" in read["version"]
    assert body["turn"]["facts"] == [] and not body["replies"][0]["citations"]


def test_the_fit_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from gatebot_knowledge.retriever import KnowledgeRetriever

    monkeypatch.setenv("GATEBOT_PACK_FIT", "off")
    retriever = KnowledgeRetriever(load_pack(ACME))
    assert retriever.build().pack_fit["shift"] == 0.0
