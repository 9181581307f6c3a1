"""What the eighth round of customer messages taught (README, "The eighth round"), through REST
on the sample pack: a question worded near a flow's example is answered, not taken for the
flow, when the intent head leans elsewhere; a person asked to show the product in a call
"showing" it starts the guided demo. The round's answerability rules are tested beside their kin
(tests/test_asked.py, tests/test_answerability.py, tests/test_retrieval_understanding.py)."""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from bot.text import asks_to_be_shown
from tests.test_answerability import _say


async def test_a_question_near_a_flows_example_is_answered(client: TestClient) -> None:
    # Near "could your sales engineer demo pipelines for our developers", and the head leans
    # to a product question: the pack answers it from the GitHub and GitLab entry.
    body = await _say(client, "we are 12 devs on gitlab.com - can pipelines hook into our repos?")
    turn = body["turn"]
    assert not turn["flow"]
    assert turn["move"]["name"] == "answer"
    assert body["replies"][0]["citations"][0]["key"] == "faq-github"


def test_a_call_showing_the_product_asks_to_be_shown() -> None:
    assert asks_to_be_shown("Would your team be able to do a Zoom session showing Pipelines?")
    assert asks_to_be_shown("can we get a call to walk us through monitor")
    assert not asks_to_be_shown("is the call showing on the incident timeline?")


async def test_a_zoom_session_showing_the_product_starts_the_guided_demo(
    client: TestClient,
) -> None:
    body = await _say(
        client, "Would your team be able to do a Zoom session showing Pipelines and Monitor?"
    )
    flow = body["turn"]["flow"]
    assert flow and flow["name"] == "demo" and flow["started_by"].get("shown")


def test_what_the_round_reads_in_words() -> None:
    from bot.text import asks_for_person, asks_to_act, tells_done

    assert asks_for_person("been going in circles for 20 min, is anyone from acme actually there??")
    assert asks_for_person("is anybody even reading this?")
    assert not asks_for_person("hey, anyone around?")  # a greeting
    assert tells_done("Just finished the demo with your sales guy, it was really helpful, thanks!")
    assert asks_to_act("We're onboarding 5 new engineers next week and need room for them.")
    assert not asks_to_act("we are a team of 12 and need SSO, which plan?")


async def test_new_hires_needing_room_on_the_plan_start_the_seat_flow(client: TestClient) -> None:
    body = await _say(
        client, "We're onboarding 5 new engineers next week and need room for them on our plan."
    )
    flow = body["turn"]["flow"]
    assert flow and flow["name"] == "add_seats"
