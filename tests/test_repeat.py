"""Repeat steps: several changes in one message, the fold before the repeat gate, the self-check
after the calls (readBackAt) and its "Is that right?", corrections and undo. The reader and the
check on their own, then the sample pack's add_seats flow over REST against the demo API."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from bot.app import App
from bot.flows.steps.phrases import read_message, split
from bot.flows.steps.selfcheck import Made, check
from tests.test_flows_api import DEMO_AUTH, Chat, start, text_of

ITEMS = {
    "seats": ["seat", "user", "users"],
    "storage_packs": ["storage pack", "storage"],
    "priority_support": ["priority support"],
}
GATE = 0.7


def picks(text: str, referent: tuple[str, str] = ("seats", "question"), **kw: Any) -> list[Any]:
    return [
        (r.pick, r.item, r.quantity, round(r.confidence, 2))
        for r in read_message(text, ITEMS, referent, **kw)
    ]


# -- the reader ----------------------------------------------------------------------------------


def test_a_message_is_cut_into_phrases() -> None:
    assert split("add 3 seats, scratch the storage pack and make it 2; done") == [
        "add 3 seats",
        "scratch the storage pack",
        "make it 2",
        "done",
    ]


def test_removing_first_folds_change_and_add_into_one_pick() -> None:
    # Alone, "make it 3 seats" after storage packs is torn: replace them, or add seats?
    alone = read_message("make it 3 seats", ITEMS, ("storage_packs", "conversation"))[0]
    assert (alone.pick, alone.confidence) == ("change", 0.62)
    assert alone.scores["add"] == 0.33 and alone.confidence < GATE and not alone.folded
    # After "scratch the storage pack" in the same message, the storage packs are gone, so
    # changing them and adding seats are the same action: one pick over the gate.
    removed, made = read_message("scratch the storage pack, make it 3 seats", ITEMS)
    assert (removed.pick, removed.item, removed.quantity) == ("remove", "storage_packs", None)
    assert made.folded and (made.pick, made.item, made.quantity) == ("add", "seats", 3)
    assert made.confidence == 0.95 >= GATE and made.scores["change"] == 0


def test_the_verb_carries_on_and_undo_and_done_read_as_themselves() -> None:
    assert picks("remove 2 seats and 1 storage pack") == [
        ("remove", "seats", 2, 0.9),
        ("remove", "storage_packs", 1, 0.85),
    ]
    assert picks("add another") == [("add", "seats", 1, 0.9)]
    assert picks("undo")[0][0] == "undo" and picks("that's all")[0][0] == "done"
    assert picks("no more storage")[0][:2] == ("remove", "storage_packs")
    assert picks("what colour is the sky")[0][0] == "none"


def test_the_verbs_of_growing_and_shrinking_a_count_say_which_way() -> None:
    # Without them a bare count read as an order: "reduce our seats by three" added three.
    assert picks("reduce our seats by three") == [("remove", "seats", 3, 0.9)]
    assert picks("cut 2 users") == [("remove", "seats", 2, 0.9)]
    assert picks("bump us by 4 seats") == [("add", "seats", 4, 0.9)]
    assert picks("increase our seats by 5") == [("add", "seats", 5, 0.9)]
    # A count given as the new total is a change to it, whichever way it goes.
    assert picks("reduce it to 5 seats", ("seats", "conversation"))[0][:3] == ("change", "seats", 5)
    assert picks("bump it to 12 users", ("seats", "conversation"))[0][:3] == ("change", "seats", 12)
    # ...however far the verb is from its total, and from where to where.
    assert picks("change the number of users on our account to 25")[0][:3] == (
        "change",
        "seats",
        25,
    )
    assert picks("can we go from 8 to 12 users")[0][:3] == ("change", "seats", 12)
    assert picks("add 3 seats to our plan")[0][:3] == ("add", "seats", 3)  # "to our": no total
    # A verb and its particle apart: "take 1 storage pack off" takes it off.
    assert picks("take 1 storage pack off")[0][:3] == ("remove", "storage_packs", 1)


def test_a_change_taken_back_counts_as_taken_off() -> None:
    # After "no" to +5 seats, "make it 3 seats" means +3, not "set the total to 3".
    assert picks("make it 3 seats", ("seats", "conversation"))[0][0] == "change"
    assert picks("make it 3 seats", ("seats", "conversation"), removed=frozenset({"seats"})) == [
        ("add", "seats", 3, 0.95)
    ]


# -- the self-check ------------------------------------------------------------------------------


def test_self_check_doubts_an_unread_phrase_a_guessed_item_and_a_record_that_disagrees() -> None:
    readings = read_message("add 2 seats, and maybe some storage", ITEMS)
    clear = check([Made(readings[0], "seats", 7, 7)], readings[:1])
    assert clear.worst() < 0.3
    missing = check([Made(readings[0], "seats", 7, 7)], readings)
    assert missing.missing == 0.8 and missing.unread == ["maybe some storage"]
    guessed = read_message("add 2", ITEMS, ("seats", "default"))
    assert check([Made(guessed[0], "seats", 7, 7)], guessed).wrong["seats"] == 0.45
    disagrees = check([Made(readings[0], "seats", 7, 9)], readings[:1])
    assert disagrees.wrong["seats"] == 0.9
    assert "expected 7, the records show 9" in disagrees.why["seats"]
    polite = read_message("add 2 seats, thanks", ITEMS)
    assert check([Made(polite[0], "seats", 7, 7)], polite).worst() < 0.3
    reads = missing.reads("s", 0.3)
    assert [(r["head"], r["outcome"]) for r in reads] == [
        ("selfcheck:s:wrong:seats", "skip"),
        ("selfcheck:s:missing", "act"),
    ]


# -- through REST on the sample pack ---------------------------------------------------------------


async def items(client: TestClient) -> dict[str, int]:
    resp = await client.get(
        "/demo-api/subscriptions/sub_acme1/seats?email=sam@example.com", headers=DEMO_AUTH
    )
    body: dict[str, int] = (await resp.json())["items"]
    return body


async def ready(client: TestClient) -> Chat:
    chat = await start(client)
    await chat.say("I'd like to add seats please")
    await chat.say("sam@example.com")
    asked = await chat.say("sub_acme1")
    assert "How many seats should I add or remove?" in text_of(asked)
    return chat


def reads(body: dict[str, Any], prefix: str) -> list[tuple[str, Any, str]]:
    return [
        (r["head"], r["answer"], r["outcome"])
        for r in body["turn"]["reads"]
        if r["head"].startswith(prefix)
    ]


async def test_one_message_makes_several_changes_and_undo_takes_the_message_back(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    chat = await ready(client)
    assert await items(client) == {"seats": 5, "storage_packs": 1, "priority_support": 0}
    both = await chat.say("add 3 seats and 2 storage packs")
    assert text_of(both).startswith("Added 3 seats (now 8). Added 2 storage packs (now 3).")
    assert [e["event"] for e in both["turn"]["tools"]].count("finished") == 2
    assert await items(client) == {"seats": 8, "storage_packs": 3, "priority_support": 0}
    assert reads(both, "repeat:") == [
        ("repeat:change_seats", "add", "act"),
        ("repeat:change_seats", "add", "act"),
    ]
    assert all(outcome == "skip" for _, _, outcome in reads(both, "selfcheck:"))
    undo = await chat.say("undo")
    assert text_of(undo).startswith("Removed 2 storage packs (now 1). Removed 3 seats (now 5).")
    assert await items(client) == {"seats": 5, "storage_packs": 1, "priority_support": 0}
    # The fold: the storage pack is taken off first, so "make it 3 seats" adds three.
    swap = await chat.say("scratch the storage pack, make it 3 seats")
    assert text_of(swap).startswith("Removed 1 storage pack (now 0). Added 3 seats (now 8).")
    phrases = swap["turn"]["flow"]["steps"][-1]["repeat"]["phrases"]
    assert phrases[1]["folded"] and phrases[1]["pick"] == "add"
    assert await items(client) == {"seats": 8, "storage_packs": 0, "priority_support": 0}
    done = await chat.say("done")
    assert "All set" in text_of(done) and done["turn"]["tools"] == []


async def test_undo_and_done_join_changes_in_the_same_message(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    chat = await ready(client)
    await chat.say("add 4 seats")
    redo = await chat.say("undo that, add 2 seats")
    assert text_of(redo).startswith("Removed 4 seats (now 5). Added 2 seats (now 7).")
    flood = await chat.say(", ".join(["add 1 seat"] * 9))
    assert "I make at most 8 at a time, so I haven't made any" in text_of(flood)
    assert flood["turn"]["tools"] == [] and (await items(client))["seats"] == 7
    last = await chat.say("add 1 storage pack and that's all")
    assert text_of(last).startswith("Added 1 storage pack (now 2).")
    assert "All set" in text_of(last) and last["turn"]["flow"]["status"] == "done"
    assert await items(client) == {"seats": 7, "storage_packs": 2, "priority_support": 0}


async def test_a_torn_phrase_is_asked_about_and_nothing_changes_until_it_is_settled(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    chat = await ready(client)
    await chat.say("add 2 seats")
    same = await chat.say("make it 7 seats")
    assert text_of(same).startswith("Seats: 7 already.") and same["turn"]["tools"] == []
    too_many = await chat.say("remove 9 seats")
    assert text_of(too_many).startswith("I couldn't remove 9 seats:")
    assert (await items(client))["seats"] == 7
    torn = await chat.say("make it 1 priority support")
    assert text_of(torn) == (
        "Should I replace the seats with 1 priority support, or add 1 priority support?"
    )
    assert torn["turn"]["tools"] == []
    assert reads(torn, "repeat:") == [("repeat:change_seats", "change", "unsure")]
    settled = await chat.say("add it please")
    assert text_of(settled).startswith("Added 1 priority support (now 1).")
    assert await items(client) == {"seats": 7, "storage_packs": 1, "priority_support": 1}
    # The API's own limit is reported as it is, never as done.
    over = await chat.say("add 1 priority support")
    assert text_of(over).startswith("I couldn't add 1 priority support:")
    assert "0 to 1" in text_of(over)
    assert [e["event"] for e in over["turn"]["tools"]][-1] == "failed"
    assert (await items(client))["priority_support"] == 1


async def test_self_check_reads_back_and_a_yes_keeps_a_no_takes_back(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    chat = await ready(client)
    doubt = await chat.say("add 2 seats, and maybe some storage")
    assert text_of(doubt) == (
        'Here is what I made of that: Added 2 seats (now 7). I did not act on: "maybe some '
        'storage". Is that right?'
    )
    assert doubt["turn"]["move"]["name"] == "confirm"
    assert ("selfcheck:change_seats:missing", "yes", "act") in reads(doubt, "selfcheck:")
    check = next(r for r in doubt["turn"]["reads"] if r["head"].endswith(":missing"))
    assert check["gate"] == "readBackAt" and check["threshold"] == 0.3
    kept = await chat.say("yes")
    assert text_of(kept).startswith("Good, that stays as it is.")
    assert (await items(client))["seats"] == 7
    await chat.say("add 1 seat and the gold plan")
    assert (await items(client))["seats"] == 8
    taken = await chat.say("no")
    assert text_of(taken) == (
        "I've taken that back: Removed 1 seat (now 7). What should it be instead?"
    )
    assert (await items(client))["seats"] == 7


async def test_a_correction_takes_back_only_what_it_names_and_reads_again(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    chat = await ready(client)
    # An earlier change to another record must not become what "make it" refers to.
    await chat.say("add 1 priority support")
    await chat.say("add 5 seats and the gold plan")
    assert (await items(client))["seats"] == 10
    corrected = await chat.say("no, make it 3 seats")
    # +5 taken back, then +3: the taken-back change counts as taken off, so "make it" adds.
    assert text_of(corrected).startswith("Removed 5 seats (now 5). Added 3 seats (now 8).")
    assert (await items(client))["seats"] == 8
    events = [(e["tool"], e["event"]) for e in corrected["turn"]["tools"]]
    assert events.count(("orders.change_items", "finished")) == 2  # the take-back, the +3
    await chat.say("add 2 seats, and maybe some storage")
    assert (await items(client))["seats"] == 10
    more = await chat.say("no, also add 1 storage pack")
    assert text_of(more).startswith("Added 1 storage pack (now 2).")
    assert await items(client) == {"seats": 10, "storage_packs": 2, "priority_support": 1}


async def test_read_back_at_is_the_packs_to_set(flow_client: tuple[TestClient, App]) -> None:
    client, gb = flow_client
    chat = await ready(client)
    bare = await chat.say("5")  # a count alone: 0.75 sure, item from the agent's question
    assert text_of(bare).startswith("Added 5 seats (now 10). Anything else?")
    worst = max(r["confidence"] for r in bare["turn"]["reads"] if r["gate"] == "readBackAt")
    assert 0.2 <= worst < 0.3
    gb.pack.gates["readBackAt"] = 0.2
    again = await chat.say("2")
    assert text_of(again).startswith("Here is what I made of that: Added 2 seats (now 12).")
    assert text_of(again).endswith("Is that right?")
