"""What the sixth round of customer messages taught (README, "The sixth round"), through REST on
the sample pack: questions asked after their context, a value the whole message's passage lacks,
compound and integration names, and refunds, seats and demos told of rather than asked for."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from bot.text import asks_how, asks_to_know, tells_done
from tests.test_answerability import _say


def _started(turn: dict[str, Any]) -> bool:
    return bool(turn["flow"]) or bool(turn["legal"].get("outcome"))


async def test_a_question_after_its_context_is_answered_not_clarified(client: TestClient) -> None:
    body = await _say(
        client,
        "our app ships as a container, can acme pipelines build docker images or do i need my "
        "own box for that",
    )
    assert body["turn"]["move"]["name"] == "answer"
    assert body["replies"][0]["citations"][0]["key"] == "faq-docker"


async def test_a_data_residency_question_is_not_declined(client: TestClient) -> None:
    # Only a topic word kept it; it sat nearer the generic lines than the pack's texts until the
    # pack's asked questions ("Can we keep our data in Europe?") were neighbours too.
    body = await _say(
        client,
        "we are a german company and need our data to stay in europe. is EU hosting an option?",
    )
    assert body["turn"]["scope"]["verdict"] == "in"
    assert body["replies"][0]["citations"][0]["key"] == "faq-data-location"


async def test_a_compound_of_a_pack_word_is_no_unseen_name(client: TestClient) -> None:
    body = await _say(
        client,
        "Hello! Before we migrate from our old CI: are Dockerfile-based builds supported out of "
        "the box?",
    )
    assert body["replies"][0]["citations"][0]["key"] == "faq-docker"


async def test_what_a_product_is_asked_to_work_with_is_a_name(client: TestClient) -> None:
    # The GitHub entry sits close, and says nothing of Bitbucket.
    body = await _say(client, "does pipelines work with bitbucket repos?")
    assert body["turn"]["facts"] == [] and not body["replies"][0]["citations"]


@pytest.mark.parametrize(
    "text",
    [
        "I got my refund last week, thanks! just confirming it's all settled on your end",
        "how do I add seats myself from the admin panel? I don't want you to do it, just tell "
        "me where",
        "the demo you guys gave us on tuesday was great, the team loved it",
    ],
)
async def test_told_of_or_done_oneself_starts_nothing(client: TestClient, text: str) -> None:
    body = await _say(client, text)
    assert not _started(body["turn"]) and body["turn"]["move"]["name"] != "handoff"


def test_the_readings_behind_them() -> None:
    assert asks_to_know("our app ships as a container, can acme pipelines build docker images")
    assert not asks_to_know("thanks, will do")
    assert not asks_to_know("I upgraded by mistake, can you refund me")  # a request to act
    assert tells_done("the demo you guys gave us on tuesday was great")
    assert not tells_done("I never got my refund")  # it did not happen: a complaint
    assert not tells_done("we had a demo last month, can we get another one for the new team?")
    assert asks_how("how do I add seats myself? just tell me where")
    assert not asks_how("please remove 2 seats")
