"""Escalation to a help desk and the relay between staff and customer, with a recording desk."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.app import App
from bot.config import Settings
from bot.extend.channel import ChannelAdapter
from bot.extend.email import EmailTransport
from bot.helpdesk import HelpDeskError
from bot.hookspecs import hookimpl
from bot.packs.model import HelpDesk
from bot.store import Escalation


class RecordingDesk(ChannelAdapter):
    """Stands in for the Slack adapter as the sample pack's support desk."""

    name = "slack"
    members = {"U_STAFF"}

    def __init__(self, app: App) -> None:
        super().__init__(app)
        self.posts: list[tuple[str, str]] = []
        self.thread_posts: list[tuple[str, str]] = []
        self.member_checks = 0

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def post_escalation(self, desk: HelpDesk, escalation: Escalation, summary: str) -> str:
        self.posts.append((desk.target, summary))
        return f"{desk.target}/thread-{escalation.id}"

    async def post_to_thread(self, desk: HelpDesk, thread: str, text: str) -> None:
        self.thread_posts.append((thread, text))

    async def is_member(self, desk: HelpDesk, staff: str) -> bool:
        self.member_checks += 1
        return staff in self.members


class Outbox(EmailTransport):
    name = "outbox"

    def __init__(self, settings: Settings) -> None:
        self.sent: list[tuple[str, str, str]] = []

    async def send(self, to: str, subject: str, body: str) -> str:
        self.sent.append((to, subject, body))
        return f"<{len(self.sent)}@outbox>"


class DeskPlugin:
    @hookimpl
    def register_channels(self, register: Callable[[Any], None]) -> None:
        register(RecordingDesk)

    @hookimpl
    def register_email_transports(self, register: Callable[[str, Any], None]) -> None:
        register("outbox", Outbox)


@pytest.fixture
async def desk_app(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[App]:
    # The recording desk stands in for the real Slack plugin, which must not load beside it.
    monkeypatch.setenv("GATEBOT_PLUGINS", "offline,web")
    settings.channels = ["slack"]
    settings.email = "outbox"
    app = App(settings, extra_plugins=[DeskPlugin()])
    await app.start()
    try:
        yield app
    finally:
        await app.stop()


def desk_of(app: App) -> RecordingDesk:
    channel = app.channel("slack")
    assert isinstance(channel, RecordingDesk)
    return channel


async def say(app: App, conv_id: str, text: str, n: str) -> Any:
    conv = app.store.get_conversation(conv_id)
    assert conv is not None
    return await app.agent.handle(conv, text, n)


async def test_asking_for_a_person_posts_to_the_help_desk(desk_app: App) -> None:
    conv, _ = desk_app.store.create_conversation("web", with_token=True)
    await say(desk_app, conv.id, "my email is dana@example.com", "1")
    await say(desk_app, conv.id, "I want to talk to a person", "2")
    target, summary = desk_of(desk_app).posts[0]
    assert target == "C0SUPPORT"
    assert "(asked): hard rule: hand off when asked" in summary
    assert "Customer on web" in summary and "email: dana@example.com" in summary
    assert "customer: I want to talk to a person" in summary
    assert "agent: I'm passing you to a person" in summary
    esc = desk_app.store.escalations("open")[0]
    assert esc.thread == "C0SUPPORT/thread-1" and esc.delivery == "posted to slack"
    assert esc.kind == "asked"


async def test_take_over_relay_and_hand_back(desk_app: App) -> None:
    conv, _ = desk_app.store.create_conversation("web", with_token=True)
    await say(desk_app, conv.id, "I want to talk to a person", "1")
    esc = desk_app.store.escalations("open")[0]
    desks = desk_app.helpdesks

    for action in (desks.take_over, desks.hand_back, desks.resolve):
        with pytest.raises(HelpDeskError, match="not a member"):
            await action(esc.id or 0, "U_STRANGER")
    await desks.take_over(esc.id or 0, "U_STAFF")
    paused = desk_app.store.get_conversation(conv.id)
    assert paused is not None and paused.paused

    events = desk_app.events.subscribe(conv.id)
    quiet = await say(desk_app, conv.id, "hello? anyone?", "2")
    assert quiet.replies == [] and quiet.record["legal"]["rule"] == "paused: staff have taken over"
    assert desk_of(desk_app).thread_posts == [("C0SUPPORT/thread-1", "customer: hello? anyone?")]

    await desks.staff_reply(esc.id or 0, "U_STAFF", "Hi, I'm Sam from support.")
    events_seen = [events.get_nowait() for _ in range(events.qsize())]
    staff_events = [e for e in events_seen if e["type"] == "replies"]
    assert staff_events[0]["replies"][0]["text"] == "Hi, I'm Sam from support."
    assert staff_events[0]["replies"][0]["author"] == "U_STAFF"
    stored = desk_app.store.messages(conv.id)
    assert (stored[-1].role, stored[-1].author) == ("staff", "U_STAFF")

    await desks.hand_back(esc.id or 0, "U_STAFF")
    back = await say(desk_app, conv.id, "Does Pipelines support Docker builds?", "3")
    assert "Docker" in back.replies[0]["text"]
    assert desk_app.store.get_escalation(esc.id or 0).status == "handed_back"  # type: ignore[union-attr]


async def test_resolve_records_an_outcome(desk_app: App) -> None:
    conv, _ = desk_app.store.create_conversation("web", with_token=True)
    await say(desk_app, conv.id, "I want to talk to a person", "1")
    esc = desk_app.store.escalations("open")[0]
    await desk_app.helpdesks.resolve(esc.id or 0, "U_STAFF", "refunded")
    done = desk_app.store.get_escalation(esc.id or 0)
    assert done is not None and (done.status, done.outcome) == ("resolved", "refunded")
    stored = desk_app.store.get_conversation(conv.id)
    assert stored is not None and stored.status == "resolved" and not stored.paused


async def test_unclaimed_escalations_go_by_email(desk_app: App) -> None:
    conv, _ = desk_app.store.create_conversation("web", with_token=True)
    await say(desk_app, conv.id, "I want to talk to a person", "1")
    assert await desk_app.helpdesks.sweep() == 0  # not yet: ten minutes to claim it
    later = datetime.now(UTC) + timedelta(minutes=11)
    assert await desk_app.helpdesks.sweep(later) == 1
    assert isinstance(desk_app.email, Outbox)
    to, subject, body = desk_app.email.sent[0]
    assert to == "support@acme.example" and subject.startswith("Unclaimed escalation #1")
    assert "I want to talk to a person" in body
    assert desk_app.store.escalations("emailed")[0].delivery.startswith("emailed to")  # type: ignore[union-attr]


async def test_without_email_the_failure_is_kept_honestly(app: App) -> None:
    conv, _ = app.store.create_conversation("web", with_token=True)
    await say(app, conv.id, "I want to talk to a person", "1")
    esc = app.store.escalations("open")[0]
    assert esc.delivery is not None and "no slack channel running" in esc.delivery
    await app.helpdesks.sweep(datetime.now(UTC) + timedelta(hours=1))
    after = app.store.escalations("open")[0]
    assert after.delivery is not None and after.delivery.startswith("email failed: no email")


async def test_every_staff_action_is_one_act_that_checks_membership_once(desk_app: App) -> None:
    conv, _ = desk_app.store.create_conversation("web", with_token=True)
    await say(desk_app, conv.id, "I want to talk to a person", "1")
    esc_id = desk_app.store.escalations("open")[0].id or 0
    desk = desk_of(desk_app)
    for verb in ("take_over", "hand_back", "resolve"):
        before = desk.member_checks
        acted = await desk_app.host.act(verb, esc_id, "U_STAFF")
        assert desk.member_checks == before + 1, verb
    assert acted.escalation.status == "resolved"
    with pytest.raises(HelpDeskError, match="not a staff action"):
        await desk_app.host.act("delete", esc_id, "U_STAFF")
    with pytest.raises(HelpDeskError, match="no escalation #99"):
        await desk_app.host.act("take_over", 99, "U_STAFF")
    # From a platform that is not the escalation's desk, the escalation is unknown.
    with pytest.raises(HelpDeskError, match="has no desk on discord"):
        await desk_app.host.act("take_over", esc_id, "U_STAFF", via="discord")


async def test_a_redelivered_staff_message_is_relayed_once_even_after_a_restart(
    desk_app: App, settings: Settings
) -> None:
    conv, _ = desk_app.store.create_conversation("web", with_token=True)
    await say(desk_app, conv.id, "I want to talk to a person", "1")
    esc_id = desk_app.store.escalations("open")[0].id or 0
    events = desk_app.events.subscribe(conv.id)
    relay = ("slack", "C0SUPPORT:500.2")

    first = await desk_app.host.act("reply", esc_id, "U_STAFF", text="Hi, Sam here.", relay=relay)
    again = await desk_app.host.act("reply", esc_id, "U_STAFF", text="Hi, Sam here.", relay=relay)
    assert first.message is not None and not first.duplicate
    assert again.duplicate and again.message is None
    assert events.qsize() == 1  # the customer saw it once

    # A fresh app on the same database (a restart) still knows the message was relayed.
    fresh = App(settings, extra_plugins=[DeskPlugin()])
    await fresh.start()
    try:
        later = await fresh.host.act("reply", esc_id, "U_STAFF", text="Hi, Sam here.", relay=relay)
        assert later.duplicate
        other = await fresh.host.act("reply", esc_id, "U_STAFF", text="More.", relay=("slack", "x"))
        assert not other.duplicate
    finally:
        await fresh.stop()
    staff = [m.text for m in desk_app.store.messages(conv.id) if m.role == "staff"]
    assert staff == ["Hi, Sam here.", "More."]


async def test_the_staff_api_acts_on_escalations_with_the_admin_token(
    desk_app: App,
) -> None:
    from aiohttp.test_utils import TestClient, TestServer
    from gatebot_web.server import build_web_app

    desk_app.settings.admin_token = "staff-token"
    conv, token = desk_app.store.create_conversation("web", with_token=True)
    await say(desk_app, conv.id, "I want to talk to a person", "1")
    esc_id = desk_app.store.escalations("open")[0].id or 0
    staff = {"Authorization": "Bearer staff-token"}
    async with TestClient(TestServer(build_web_app(desk_app.host), host="127.0.0.1")) as client:
        url = f"/api/staff/escalations/{esc_id}"
        customer = {"Authorization": f"Bearer {token}"}
        refused = await client.post(f"{url}/take_over", json={"staff": "Sam"}, headers=customer)
        assert refused.status == 401
        # The admin token stands in for desk membership: "Sam" is no Slack member.
        resp = await client.post(f"{url}/reply", json={"staff": "Sam", "text": "Hi"}, headers=staff)
        body = await resp.json()
        assert resp.status == 200 and body["escalation"]["status"] == "claimed"
        assert body["escalation"]["staff"] == "Sam" and not body["duplicate"]
        empty = await client.post(f"{url}/reply", json={"staff": "Sam"}, headers=staff)
        assert empty.status == 400
        done = await client.post(
            f"{url}/resolve", json={"staff": "Sam", "outcome": "refunded"}, headers=staff
        )
        assert (await done.json())["escalation"]["outcome"] == "refunded"
        again = await client.post(f"{url}/take_over", json={"staff": "Sam"}, headers=staff)
        assert again.status == 409 and "is resolved" in (await again.json())["error"]["message"]
        missing = await client.post(
            "/api/staff/escalations/99/resolve", json={"staff": "Sam"}, headers=staff
        )
        assert missing.status == 404
    stored = desk_app.store.messages(conv.id)
    assert (stored[-1].role, stored[-1].author, stored[-1].text) == ("staff", "Sam", "Hi")


HOURS_EN = "They answer Monday to Friday, 9:00 to 18:00 CET."


async def test_a_waiting_hand_off_says_what_is_next_and_relays_instead_of_answering(
    desk_app: App,
) -> None:
    conv, _ = desk_app.store.create_conversation("web", with_token=True)
    handed = await say(desk_app, conv.id, "I want to talk to a person", "1")
    # What happens next, plainly, with the desk's hours from the pack.
    assert handed.replies[0]["text"].endswith(HOURS_EN)
    assert handed.record["reply"]["text"].endswith(HOURS_EN)

    # Nobody has taken it: the agent does not answer the question as if nothing happened.
    later = await say(desk_app, conv.id, "Does Pipelines support Docker builds?", "2")
    assert [r["text"] for r in later.replies] == [
        "Our team has been told and a person will answer you here. I've passed your message on "
        f"to them. {HOURS_EN}"
    ]
    assert later.record["legal"]["rule"].startswith("waiting:")
    assert later.record["move"]["name"] == "handoff" and later.record["move"]["escalate"] is False
    assert desk_of(desk_app).thread_posts == [
        ("C0SUPPORT/thread-1", "customer: Does Pipelines support Docker builds?")
    ]
    assert len(desk_app.store.escalations()) == 1  # asked once, however often they write
    stored = [m.text for m in desk_app.store.messages(conv.id) if m.role == "customer"]
    assert stored[-1] == "Does Pipelines support Docker builds?"

    # In the customer's language, hours included.
    fr, _ = desk_app.store.create_conversation("web", with_token=True, language="fr")
    await say(desk_app, fr.id, "I want to talk to a person", "fr-1")
    waiting = await say(desk_app, fr.id, "Vous êtes là ? Je voudrais une réponse", "fr-2")
    assert waiting.replies[0]["text"].startswith("Notre équipe est prévenue"), waiting.record[
        "move"
    ]
    assert "du lundi au vendredi" in waiting.replies[0]["text"]

    # Taken over and handed back: the agent answers again.
    esc_id = desk_app.store.escalations("open")[0].id or 0
    await desk_app.host.act("take_over", esc_id, "U_STAFF")
    await desk_app.host.act("hand_back", esc_id, "U_STAFF")
    assert desk_app.store.escalations("open")[0].conversation_id == fr.id  # the other waits
    back = await say(desk_app, conv.id, "Does Pipelines support Docker builds?", "3")
    assert "Docker" in back.replies[0]["text"]


async def test_with_no_desk_the_agent_carries_on(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app.pack, "helpdesks", [])
    conv, _ = app.store.create_conversation("web", with_token=True)
    await say(app, conv.id, "I want to talk to a person", "1")
    stored = app.store.get_conversation(conv.id)
    assert stored is not None and stored.status == "open"
    back = await say(app, conv.id, "Does Pipelines support Docker builds?", "2")
    assert "Docker" in back.replies[0]["text"]


async def test_handed_off_with_no_escalation_waiting_the_agent_answers(desk_app: App) -> None:
    """A conversation marked handed off whose escalation is gone (resolved elsewhere, or queued
    by an older version without a desk) is not kept waiting."""
    conv, _ = desk_app.store.create_conversation("web", with_token=True)
    desk_app.store.update_conversation(conv.id, status="handed_off")
    back = await say(desk_app, conv.id, "Does Pipelines support Docker builds?", "1")
    assert "Docker" in back.replies[0]["text"]
    stored = desk_app.store.get_conversation(conv.id)
    assert stored is not None and stored.status == "open"


async def test_a_staff_reply_carries_its_author_name_and_message_id(desk_app: App) -> None:
    conv, _ = desk_app.store.create_conversation("web", with_token=True)
    await say(desk_app, conv.id, "I want to talk to a person", "1")
    esc_id = desk_app.store.escalations("open")[0].id or 0
    events = desk_app.events.subscribe(conv.id)
    acted = await desk_app.host.act(
        "reply", esc_id, "U_STAFF", text="Hi", relay=("slack", "1.2"), staff_name="Sam Lee"
    )
    assert acted.message is not None and acted.message.author_name == "Sam Lee"
    (reply,) = events.get_nowait()["replies"]
    assert reply["author_name"] == "Sam Lee" and reply["message_id"] == acted.message.id
    unnamed = await desk_app.host.act("reply", esc_id, "U_STAFF", text="More")
    assert unnamed.message is not None and unnamed.message.author_name is None  # "Team"
