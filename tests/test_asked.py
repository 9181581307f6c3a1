"""The ways customers ask: a pack's ``asked`` questions (on FAQ entries, and on document sections
in their front matter) rank a passage as its own question does, through the REST API on the
sample pack; they never vouch for a question naming what the pack never says, in any language;
and a front matter naming a section the document lacks is an error that says which."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from aiohttp.test_utils import TestClient

from bot.errors import PackErrors
from bot.packs import Pack, load_pack
from tests.test_retrieval_understanding import _check, _cited, _turns

ACME = Path(__file__).resolve().parent.parent / "knowledge" / "acme"


def test_the_sample_pack_declares_how_its_facts_are_asked(pack: Pack) -> None:
    from gatebot_knowledge.passages import pack_passages

    entry = next(f for f in pack.faq if f.key == "faq-invoice")
    assert "Where can I download our bills?" in entry.asked
    by_key = {p.key: p for p in pack_passages(pack)}
    assert by_key["faq-invoice"].asked == entry.asked
    # A section's questions go to its passages, found by the heading as written.
    assert "Can I make 2FA mandatory for the whole team?" in by_key["doc-account#sign-in"].asked
    assert "bills" in by_key["faq-invoice"].lexical  # BM25 reads them too


def test_a_passage_scores_its_best_title_among_the_ways_it_is_asked() -> None:
    from gatebot_knowledge.index import Vectors

    eye = np.eye(3, dtype=np.float32)
    vectors = Vectors(
        joint=eye[[0, 1]],
        titles=eye[[0, 1]],
        title_row=np.array([0, 1]),
        asked=eye[[2]],
        asked_row=np.array([1]),
    )
    assert vectors.title_scores(eye[2]).tolist() == [0.0, 1.0]  # passage 1 is asked this way
    assert vectors.title_scores(eye[0], [1, 0]).tolist() == [0.0, 1.0]
    kept = vectors.subset([1])  # a passage taken out takes its asked questions with it
    assert kept.asked_row is not None and kept.asked_row.tolist() == [0]
    assert vectors.subset([0]).title_scores(eye[2]).tolist() == [0.0]


def test_asked_naming_a_section_the_document_lacks_is_an_error(tmp_path: Path) -> None:
    copy = tmp_path / "acme"
    shutil.copytree(ACME, copy)
    doc = copy / "docs" / "monitor.md"
    doc.write_text(
        doc.read_text(encoding="utf-8").replace("  Checks:\n", "  Uptime checks:\n", 1),
        encoding="utf-8",
    )
    with pytest.raises(PackErrors, match=r"no section 'Uptime checks'.*Checks"):
        load_pack(copy)
    # By the heading's anchor slug is as good as by the heading.
    doc.write_text(
        doc.read_text(encoding="utf-8").replace("  Uptime checks:\n", "  checks:\n", 1),
        encoding="utf-8",
    )
    assert load_pack(copy).documents


async def test_a_question_worded_like_an_asked_one_is_answered(client: TestClient) -> None:
    body = await _turns(client, "can we force MFA for everyone on the team?")
    assert _cited(body) == ["doc-account#sign-in"]
    body = await _turns(client, "where in the dashboard are the bills? my accountant keeps asking")
    assert _cited(body) == ["faq-invoice"]


async def test_asked_questions_never_vouch_for_a_name_the_pack_never_says(
    client: TestClient,
) -> None:
    # Worded like "Can we run builds on our own machines?" (self-hosted runners), but about ARM.
    body = await _turns(client, "can my builds run on ARM machines")
    assert _cited(body) == []
    assert "unseen-name" in _check(body)["version"]
    # In another language too: close to "Does Pipelines work with our GitHub repos?".
    body = await _turns(client, "Est-ce que Pipelines fonctionne avec Bitbucket ?")
    assert _cited(body) == []
    # German capitalises its nouns: a capital there is no name, and the entry is still found.
    body = await _turns(
        client, "Kann ich Benachrichtigungen per SMS bekommen, wenn meine Seite ausfällt?"
    )
    assert _cited(body) == ["faq-slack-alerts"]


async def test_a_name_the_question_sends_to_or_uses_is_refused(client: TestClient) -> None:
    for text in (
        "can monitor alerts go to pagerduty or opsgenie instead of slack?",
        "we use azure devops for our repos, can pipelines connect to it?",
    ):
        body = await _turns(client, text)
        assert _cited(body) == [], text
        assert "unseen-name" in _check(body)["version"], text


def test_a_name_asked_as_the_target_weighs_more_than_a_written_one() -> None:
    from gatebot_knowledge.packfit import NAMED_PENALTY, TARGET_PENALTY, name_penalty

    assert name_penalty("can alerts go to pagerduty?", ["pagerduty"]) == TARGET_PENALTY
    assert name_penalty("we use azure devops", ["azure"]) == TARGET_PENALTY
    assert name_penalty("can CI build it from our Dockerfile?", ["Dockerfile"]) == NAMED_PENALTY
    assert TARGET_PENALTY > NAMED_PENALTY


def test_the_questions_inside_a_message_are_its_question_sentences() -> None:
    from gatebot_knowledge.sentences import question_sentences

    text = "We hired two contractors last week. Do viewers count as paid seats? Thanks!"
    assert question_sentences(text) == ["Do viewers count as paid seats?"]
    assert question_sentences("Do viewers count as paid seats?") == []  # one sentence: itself
    assert question_sentences("Hi. Help?") == []  # too short to read alone


async def test_a_question_inside_context_is_read_alone(client: TestClient) -> None:
    body = await _turns(
        client,
        "Our current monitoring tool wakes us up at night with false alarms when one probe has "
        "a network hiccup. How does your product decide that a website is really down?",
    )
    assert _cited(body) == ["doc-monitor#checks"]
    read = _check(body)
    assert read["version"].endswith("+sentence") and read["query"].startswith("How does")
    # A value the whole message asks for and its passage lacks holds for every sentence.
    body = await _turns(
        client,
        "how long is incident history kept in acme monitor? can I see incidents from 2 years ago",
    )
    assert _cited(body) == []


async def test_a_question_in_another_language_finds_a_document_section(
    client: TestClient,
) -> None:
    body = await _turns(client, "¿Cuánto tiempo se guardan los registros de las compilaciones?")
    assert _cited(body) == ["doc-pipelines#retries-and-logs"]
    read = _check(body)
    assert read["version"].startswith("multilingual-use3/es")


def test_the_action_a_question_asks_about_is_read() -> None:
    from gatebot_knowledge.specific import asked_action

    assert asked_action("Can the free trial be extended by another two weeks?") == "extend"
    assert asked_action("Can people subscribe to our status page?") == "subscrib"
    assert asked_action("is it possible to export all our data?") == "export"
    assert asked_action("how do I get our invoices?") is None  # a light verb names nothing
    assert asked_action("Can anyone on the team download invoices?") is None  # no verb read
    assert asked_action("where is my data stored?") is None


async def test_an_action_the_pack_never_names_is_not_asserted(client: TestClient) -> None:
    body = await _turns(
        client, "Can people subscribe to our status page and get an email when we post an incident?"
    )
    assert _cited(body) == []
    read = _check(body)
    assert "+action-unseen" in read["version"]


async def test_an_action_only_another_passages_asked_question_names_is_unseen(
    client: TestClient,
) -> None:
    # "move" is in an asked question of the alerts section ("Can an unanswered alert move on to
    # my backup?"), which vouches for no action of the data-location entry.
    body = await _turns(
        client, "We created our workspace in the US region by mistake. Can you move it to the EU?"
    )
    assert _cited(body) == []
    assert "+action-unseen" in _check(body)["version"]


def test_the_thing_an_existence_question_asks_about_is_read() -> None:
    from gatebot_knowledge.specific import asked_thing

    assert asked_thing("is there a mobile app for getting alerts on my phone") == ["mobil", "app"]
    assert asked_thing("Do you offer an on-prem version of Acme Cloud for our datacenter?") == [
        "prem"
    ]
    assert asked_thing("is there a way to retry a job") == []  # "a way to" names no thing
    assert asked_thing("how long is the trial?") == []


async def test_a_thing_the_pack_never_names_is_not_asserted(client: TestClient) -> None:
    # The pricing entry matched this at 0.97 (its title: "How much does Acme Cloud cost?").
    body = await _turns(
        client,
        "Do you offer an on-prem version of Acme Cloud we can install in our own datacenter?",
    )
    assert _cited(body) == []
    read = _check(body)
    assert "+thing-unseen" in read["version"] and "faq-match" not in read["version"]


def test_the_plan_a_price_question_names_is_read() -> None:
    from gatebot_knowledge.specific import asked_plan

    assert asked_plan("how much is the Business plan per month, ballpark?") == "business"
    assert asked_plan("what does the pro tier cost") == "pro"
    assert asked_plan("is there a no-cost plan, or is everything paid?") is None
    assert asked_plan("how much is the free plan") is None
    assert asked_plan("which plan do I need for SSO") is None  # no price asked


async def test_a_price_of_a_plan_the_entry_does_not_name_is_not_asserted(
    client: TestClient,
) -> None:
    # The pricing entry speaks of plans in general; it was cited for this at 0.94.
    body = await _turns(client, "how much is the Business plan per month, ballpark?")
    assert _cited(body) == []
    assert "+plan-missing" in _check(body)["version"]


def test_a_verb_the_pack_writes_otherwise_names_the_action() -> None:
    from gatebot_knowledge.specific import action_named

    vocab = {"requir", "delet", "retri"}.__contains__
    assert action_named("forc", vocab)  # "force 2FA" is what the page words as "required"
    assert action_named("wip", vocab)  # "wipe": "delete"
    assert not action_named("subscrib", vocab)


async def test_forcing_two_factor_is_answered_from_the_sign_in_section(client: TestClient) -> None:
    body = await _turns(
        client, "Can I force everyone in our workspace to turn on 2FA? where's that setting"
    )
    assert _cited(body) == ["doc-account#sign-in"]


def test_a_figure_asked_past_is_read_against_the_passage() -> None:
    from gatebot_knowledge.beyond import beyond_stated

    logs = "A failed job can be retried. Logs are kept for 30 days."
    assert beyond_stated("can we keep build logs longer than 30 days if we pay extra?", logs)
    assert not beyond_stated("do you keep logs for more than a week?", logs)  # 30 days answers
    assert not beyond_stated("can we keep logs longer than 30 days?", "Caches last seven days.")


async def test_asking_past_the_passage_figure_is_not_asserted(client: TestClient) -> None:
    body = await _turns(client, "can we keep build logs longer than 30 days if we pay extra?")
    assert _cited(body) == []
    assert "+beyond-stated" in _check(body)["version"]
