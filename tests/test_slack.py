"""The Slack channel against the real slack-bolt and slack-sdk, on loopback only.

Slack's Web API is ``tests/slack_server.py`` (records every call); Slack's deliveries are signed
HTTP requests to the bot's own ``/slack/events``, or envelopes on the loopback Socket Mode
websocket. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import gatebot_slack
import pytest
from gatebot_slack import blocks
from gatebot_slack.channel import SlackChannel
from gatebot_slack.config import SlackSettings

from bot.app import App
from bot.config import Settings
from bot.errors import ConfigError
from bot.outcomes import KINDS
from tests.conftest import ACME
from tests.slack_server import BOT_ID, BOT_USER, Call, SlackServer

SECRET = "test-signing-secret"
BOT_TOKEN = "xoxb-test-bot-token"
APP_TOKEN = "xapp-test-app-token"
DESK = "C0SUPPORT"
STAFF, STRANGER, CUSTOMER = "U_STAFF", "U_STRANGER", "U_CUSTOMER"
DM = "D0CUSTOMER"
WAIT = 5.0


def sign(body: str, timestamp: str, secret: str = SECRET) -> str:
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@dataclass
class Bot:
    app: App
    http: aiohttp.ClientSession
    slack: SlackServer

    @property
    def channel(self) -> SlackChannel:
        channel = self.app.channel("slack")
        assert isinstance(channel, SlackChannel)
        return channel

    @property
    def base(self) -> str:
        web = self.app.channel("web")
        return f"http://127.0.0.1:{getattr(web, 'port', None)}"

    async def deliver(
        self,
        body: str,
        content_type: str = "application/json",
        secret: str = SECRET,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, str]:
        """A signed POST to /slack/events, as Slack sends it. Returns (status, body)."""
        timestamp = str(int(time.time()))
        sent = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": sign(body, timestamp, secret),
            **(headers or {}),
        }
        async with self.http.post(f"{self.base}/slack/events", data=body, headers=sent) as resp:
            return resp.status, await resp.text()

    async def event(
        self, event: dict[str, Any], event_id: str, retry: int | None = None
    ) -> tuple[int, str]:
        body = {
            "token": "legacy",
            "team_id": "T1",
            "api_app_id": "A1",
            "type": "event_callback",
            "event_id": event_id,
            "event_time": int(time.time()),
            "event": {"event_ts": event.get("ts"), **event},
            "authorizations": [{"team_id": "T1", "user_id": BOT_USER, "is_bot": True}],
        }
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        return await self.deliver(json.dumps(body), headers=headers if retry else None)

    async def click(
        self, verb: str, escalation_id: int, user: str, outcome: str | None = None
    ) -> tuple[int, str]:
        """A help-desk control, as a block_actions payload (form-encoded, like Slack's): a
        button, or with ``outcome`` the Resolve menu with that option chosen."""
        action: dict[str, Any] = {
            "type": "button",
            "action_id": blocks.desk_action_id(verb, escalation_id),
            "block_id": f"gatebot-desk-{escalation_id}",
            "value": str(escalation_id),
        }
        if outcome is not None:
            del action["value"]
            option = {"text": {"type": "plain_text", "text": outcome}, "value": outcome}
            action.update(type="static_select", selected_option=option)
        payload = {
            "type": "block_actions",
            "user": {"id": user, "team_id": "T1"},
            "api_app_id": "A1",
            "team": {"id": "T1"},
            "channel": {"id": DESK},
            "container": {"type": "message", "channel_id": DESK},
            "trigger_id": "1.2.3",
            "actions": [action],
        }
        body = urlencode({"payload": json.dumps(payload)})
        return await self.deliver(body, "application/x-www-form-urlencoded")

    async def press(self, action: dict[str, Any], user: str, channel: str, thread: str) -> None:
        """A customer's button under a reply in their thread (block_actions, form-encoded)."""
        payload = {
            "type": "block_actions",
            "user": {"id": user, "team_id": "T1"},
            "api_app_id": "A1",
            "team": {"id": "T1"},
            "channel": {"id": channel},
            "container": {"type": "message", "channel_id": channel, "thread_ts": thread},
            "trigger_id": "1.2.4",
            "actions": [{**action, "action_ts": f"{time.time():.6f}"}],
        }
        body = urlencode({"payload": json.dumps(payload)})
        assert (await self.deliver(body, "application/x-www-form-urlencoded"))[0] == 200

    async def settle(self, wait: float = WAIT) -> None:
        """Wait (bounded) until every turn the deliveries started has finished."""
        await asyncio.wait_for(self.channel.drain(), wait)

    # -- the web widget ------------------------------------------------------------------------

    async def visitor(self) -> tuple[str, str]:
        async with self.http.post(f"{self.base}/api/conversations", json={}) as resp:
            assert resp.status == 201
            data = await resp.json()
        return data["id"], data["token"]

    async def widget_says(self, conv: tuple[str, str], text: str, n: str) -> dict[str, Any]:
        url = f"{self.base}/api/conversations/{conv[0]}/messages"
        body = {"text": text, "client_message_id": n}
        auth = {"Authorization": f"Bearer {conv[1]}"}
        async with self.http.post(url, json=body, headers=auth) as resp:
            assert resp.status == 200, await resp.text()
            result: dict[str, Any] = await resp.json()
            return result


@pytest.fixture
async def slack() -> AsyncIterator[SlackServer]:
    server = SlackServer(members={DESK: [STAFF, BOT_USER]})
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def slack_env(monkeypatch: pytest.MonkeyPatch, slack: SlackServer, **values: str) -> None:
    for name in ("SLACK_MODE", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SLACK_API_URL", slack.api_url)
    for name, value in values.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
async def bot(
    slack: SlackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    request: pytest.FixtureRequest,
) -> AsyncIterator[Bot]:
    # Pre-flight's mode: a test of the escalation menu asks for routing (indirect parameter).
    preflight = getattr(request, "param", "off")
    slack_env(monkeypatch, slack, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SECRET)
    # Port 0: the web channel binds a free port and reports it.
    settings = Settings(
        pack=ACME,
        data_dir=tmp_path,
        recorders=[],
        channels=["web", "slack"],
        port=0,
        preflight=preflight,
    )
    app = App(settings, extra_plugins=[gatebot_slack])
    await app.start()
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT)) as http:
            yield Bot(app, http, slack)
    finally:
        await app.stop()
    # Work after the ack fails only into the log: a test passes only if nothing did.
    failures = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert failures == []


def dm(text: str, ts: str, thread_ts: str | None = None, **extra: Any) -> dict[str, Any]:
    event = {"type": "message", "channel": DM, "channel_type": "im", "user": CUSTOMER}
    event.update(text=text, ts=ts, **extra)
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def in_desk_thread(thread_ts: str, text: str, ts: str, user: str = STAFF) -> dict[str, Any]:
    return {
        "type": "message",
        "channel": DESK,
        "channel_type": "channel",
        "user": user,
        "text": text,
        "ts": ts,
        "thread_ts": thread_ts,
    }


def action_ids(call: Call) -> list[str]:
    return [
        element["action_id"]
        for block in call.body.get("blocks", [])
        if block["type"] == "actions"
        for element in block["elements"]
    ]


# -- customers ---------------------------------------------------------------------------------


async def test_a_signed_message_gets_one_reply_in_its_thread(bot: Bot) -> None:
    status, _ = await bot.event(dm("Does Pipelines support Docker builds?", "100.1"), "Ev1")
    assert status == 200
    await bot.settle()
    posts = bot.slack.calls_to("chat.postMessage")
    assert len(posts) == 1
    post = posts[0]
    assert (post.body["channel"], post.body["thread_ts"]) == (DM, "100.1")
    assert "Docker" in post.body["text"] and post.body["blocks"][0]["type"] == "section"
    assert post.token == BOT_TOKEN
    conv = bot.app.store.find_conversation("slack", f"{DM}:100.1")
    assert conv is not None and conv.turn_count == 1


async def test_a_redelivered_event_makes_no_second_turn_or_reply(bot: Bot) -> None:
    event = dm("Does Pipelines support Docker builds?", "100.1")
    assert (await bot.event(event, "Ev1"))[0] == 200
    await bot.settle()
    status, _ = await bot.event(event, "Ev1", retry=1)
    assert status == 200  # acknowledged, so Slack stops retrying
    await bot.settle()
    assert len(bot.slack.calls_to("chat.postMessage")) == 1
    conv = bot.app.store.find_conversation("slack", f"{DM}:100.1")
    assert conv is not None and len(bot.app.store.turns(conv.id)) == 1


async def test_deliveries_racing_each_other_make_one_turn(bot: Bot) -> None:
    """Slack's retry can land while the first delivery's turn still runs."""
    event = dm("Does Pipelines support Docker builds?", "100.1")
    results = await asyncio.gather(bot.event(event, "Ev1"), bot.event(event, "Ev1", retry=1))
    assert [status for status, _ in results] == [200, 200]
    await bot.settle()
    assert len(bot.slack.calls_to("chat.postMessage")) == 1
    assert len(bot.app.store.escalations()) == 0
    conv = bot.app.store.find_conversation("slack", f"{DM}:100.1")
    assert conv is not None and len(bot.app.store.turns(conv.id)) == 1


async def test_slack_is_answered_before_the_turn_and_stop_waits_for_it(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ack must not wait for the turn (Slack allows 3 seconds); stop must not drop it."""
    release = asyncio.Event()
    handle = bot.app.agent.handle

    async def held(*args: Any, **kwargs: Any) -> Any:
        await release.wait()
        return await handle(*args, **kwargs)

    monkeypatch.setattr(bot.app.agent, "handle", held)
    status, _ = await bot.event(dm("Does Pipelines support Docker builds?", "100.1"), "Ev1")
    assert status == 200 and bot.slack.calls_to("chat.postMessage") == []
    stopping = asyncio.create_task(bot.channel.stop())
    await asyncio.sleep(0.05)
    assert not stopping.done()  # the turn is still in flight
    release.set()
    await asyncio.wait_for(stopping, WAIT)
    assert len(bot.slack.calls_to("chat.postMessage", channel=DM)) == 1
    status, _ = await bot.event(dm("anyone?", "100.2"), "Ev2")
    assert status == 503  # stopped: Slack will redeliver to whoever runs next


async def test_a_bad_signature_is_refused_and_nothing_is_stored(bot: Bot) -> None:
    body = json.dumps({"type": "event_callback", "event_id": "Ev1", "event": dm("hello", "100.1")})
    status, _ = await bot.deliver(body, secret="not-the-secret")
    assert status == 401
    stale = str(int(time.time()) - 3600)  # a replayed old request, correctly signed
    headers = {"X-Slack-Request-Timestamp": stale, "X-Slack-Signature": sign(body, stale)}
    async with bot.http.post(f"{bot.base}/slack/events", data=body, headers=headers) as resp:
        assert resp.status == 401
    await bot.settle()
    assert bot.app.store.find_conversation("slack", f"{DM}:100.1") is None
    assert bot.app.store.pending() == [] and bot.slack.calls_to("chat.postMessage") == []


async def test_the_url_verification_challenge_is_answered(bot: Bot) -> None:
    body = json.dumps({"token": "legacy", "challenge": "c-123", "type": "url_verification"})
    status, text = await bot.deliver(body)
    assert status == 200 and json.loads(text) == {"challenge": "c-123"}


async def test_a_mention_and_its_message_event_are_one_message(bot: Bot) -> None:
    """A mention arrives as app_mention and (in a thread) as message too: one turn, one reply.
    Later lines in a customer's thread need no mention."""
    said = {"channel": "C0GENERAL", "user": CUSTOMER, "ts": "200.1"}
    said["text"] = f"<@{BOT_USER}> does Pipelines support Docker builds?"
    await bot.event({"type": "app_mention", **said}, "Ev1")
    await bot.event({"type": "message", "channel_type": "channel", **said}, "Ev2")
    await bot.settle()
    posts = bot.slack.calls_to("chat.postMessage", channel="C0GENERAL")
    assert len(posts) == 1 and posts[0].body["thread_ts"] == "200.1"
    conv = bot.app.store.find_conversation("slack", "C0GENERAL:200.1")
    assert conv is not None
    assert bot.app.store.messages(conv.id)[0].text == "does Pipelines support Docker builds?"

    again = {**said, "ts": "200.2", "thread_ts": "200.1"}
    again["text"] = f"<@{BOT_USER}> and what does it cost?"
    await asyncio.gather(
        bot.event({"type": "app_mention", **again}, "Ev3"),
        bot.event({"type": "message", "channel_type": "channel", **again}, "Ev4"),
    )
    follow_up = {"type": "message", "channel_type": "channel", "channel": "C0GENERAL"}
    follow_up.update(user=CUSTOMER, text="thanks!", ts="200.3", thread_ts="200.1")
    await bot.event(follow_up, "Ev5")
    chatter = {**follow_up, "ts": "300.1", "text": "lunch?", "thread_ts": None}
    await bot.event(chatter, "Ev6")  # not a customer's thread, no mention: not for the bot
    await bot.settle()
    assert len(bot.slack.calls_to("chat.postMessage", channel="C0GENERAL")) == 3
    assert len(bot.app.store.turns(conv.id)) == 3


async def test_bot_messages_and_subtypes_are_never_read(bot: Bot) -> None:
    await bot.event(dm("an echo of our own post", "100.1", bot_id=BOT_ID), "Ev1")
    await bot.event(dm("edited", "100.2", subtype="message_changed"), "Ev2")
    ours = dm("our own post", "100.3")
    ours["user"] = BOT_USER
    await bot.event(ours, "Ev3")
    await bot.settle()
    assert bot.slack.calls_to("chat.postMessage") == []
    assert bot.app.store.pending() == [] and bot.app.store.escalations() == []


# -- the help desk -----------------------------------------------------------------------------


async def escalate_visitor(bot: Bot) -> tuple[tuple[str, str], int, str]:
    """A widget visitor asks for a person. Returns (conversation, escalation id, desk ts)."""
    conv = await bot.visitor()
    result = await bot.widget_says(conv, "I want to talk to a person", "m1")
    assert "person" in result["replies"][0]["text"]
    (post,) = await bot.slack.wait_for("chat.postMessage", channel=DESK)
    esc = bot.app.store.escalations("open")[0]
    ts = post.answer["ts"]
    assert esc.thread == f"{DESK}:{ts}"
    return conv, esc.id or 0, ts


async def test_a_widget_visitor_asking_for_a_person_appears_on_the_slack_desk(bot: Bot) -> None:
    conv, esc_id, _ = await escalate_visitor(bot)
    post = bot.slack.calls_to("chat.postMessage", channel=DESK)[0]
    assert "thread_ts" not in post.body
    assert f"Escalation #{esc_id} (asked)" in post.body["text"]
    summary = " ".join(b["text"]["text"] for b in post.body["blocks"] if b["type"] == "section")
    assert f"conversation {conv[0]}" in summary and "I want to talk to a person" in summary
    assert action_ids(post) == [
        f"gatebot:take_over:{esc_id}",
        f"gatebot:hand_back:{esc_id}",
        f"gatebot:resolve:{esc_id}",
    ]
    esc = bot.app.store.get_escalation(esc_id)
    assert esc is not None and esc.delivery == "posted to slack"
    (menu,) = [e for b in post.body["blocks"] if b["type"] == "actions" for e in b["elements"]][2:]
    assert menu["type"] == "static_select"
    assert [o["value"] for o in menu["options"]] == list(KINDS)


async def test_resolve_records_the_outcome_staff_chose(bot: Bot) -> None:
    conv, esc_id, desk_ts = await escalate_visitor(bot)
    await bot.click("resolve", esc_id, STAFF, outcome="no-such-kind")  # nothing done
    await bot.settle()
    assert bot.app.store.outcomes(conv[0]) == []
    await bot.click("resolve", esc_id, STRANGER, outcome="purchase")  # not a desk member
    await bot.settle()
    assert bot.app.store.outcomes(conv[0]) == []

    assert (await bot.click("resolve", esc_id, STAFF, outcome="purchase"))[0] == 200
    await bot.settle()
    esc = bot.app.store.get_escalation(esc_id)
    assert esc is not None and (esc.status, esc.outcome) == ("resolved", "purchase")
    (label,) = bot.app.store.outcomes(conv[0])
    assert (label.kind, label.source, label.staff) == ("purchase", "escalation", STAFF)
    assert label.turns and label.turns[0]["seq"] == 1  # linked to the turns that led here
    note = bot.slack.calls_to("chat.postMessage", channel=DESK, thread_ts=desk_ts)[-1]
    assert note.body["text"] == f"<@{STAFF}> resolved this escalation: purchase."


async def test_take_over_from_a_member_pauses_and_a_stranger_is_refused(bot: Bot) -> None:
    conv, esc_id, desk_ts = await escalate_visitor(bot)

    assert (await bot.click("take_over", esc_id, STRANGER))[0] == 200
    await bot.settle()
    (refusal,) = bot.slack.calls_to("chat.postEphemeral")
    assert refusal.body["user"] == STRANGER and refusal.body["channel"] == DESK
    assert "not a member" in refusal.body["text"]
    stored = bot.app.store.get_conversation(conv[0])
    assert stored is not None and not stored.paused

    assert (await bot.click("take_over", esc_id, STAFF))[0] == 200
    await bot.settle()
    stored = bot.app.store.get_conversation(conv[0])
    assert stored is not None and stored.paused
    note = bot.slack.calls_to("chat.postMessage", channel=DESK, thread_ts=desk_ts)[-1]
    assert f"<@{STAFF}> took over" in note.body["text"]
    esc = bot.app.store.get_escalation(esc_id)
    assert esc is not None and (esc.status, esc.staff) == ("claimed", STAFF)

    # While staff have it, the visitor's messages go into the desk thread, not to the agent.
    quiet = await bot.widget_says(conv, "hello? anyone there?", "m2")
    assert quiet["replies"] == []
    relayed = bot.slack.calls_to("chat.postMessage", channel=DESK, thread_ts=desk_ts)[-1]
    assert relayed.body["text"] == "customer: hello? anyone there?"


async def test_a_stranger_cannot_resolve_or_hand_back(bot: Bot) -> None:
    _, esc_id, _ = await escalate_visitor(bot)
    await bot.click("resolve", esc_id, STRANGER)
    await bot.click("hand_back", esc_id, STRANGER)
    await bot.settle()
    assert len(bot.slack.calls_to("chat.postEphemeral", user=STRANGER)) == 2
    esc = bot.app.store.get_escalation(esc_id)
    assert esc is not None and esc.status == "open"


async def test_a_staff_reply_in_the_thread_reaches_the_visitors_websocket(bot: Bot) -> None:
    conv, esc_id, desk_ts = await escalate_visitor(bot)
    url = f"{bot.base}/api/conversations/{conv[0]}/events?token={conv[1]}"
    async with bot.http.ws_connect(url) as ws:
        # Our own relay comes back as a bot message event: it must change nothing.
        echo = in_desk_thread(desk_ts, "customer: hi", "500.1", user=BOT_USER)
        await bot.event({**echo, "bot_id": BOT_ID}, "Ev0")
        await bot.event(in_desk_thread(desk_ts, "Hi, I'm Sam from support.", "500.2"), "Ev1")
        await bot.settle()
        while True:
            event = await asyncio.wait_for(ws.receive_json(), WAIT)
            if event["type"] == "replies":
                break
    (reply,) = event["replies"]
    assert reply["text"] == "Hi, I'm Sam from support."
    assert (reply["role"], reply["author"]) == ("staff", STAFF)
    esc = bot.app.store.get_escalation(esc_id)
    assert esc is not None and esc.status == "claimed"  # replying is taking over
    stored = bot.app.store.messages(conv[0])
    assert [(m.role, m.author) for m in stored].count(("staff", STAFF)) == 1

    # A redelivered staff message does not reach the customer twice.
    await bot.event(in_desk_thread(desk_ts, "Hi, I'm Sam from support.", "500.2"), "Ev1", retry=1)
    await bot.settle()
    stored = bot.app.store.messages(conv[0])
    assert [(m.role, m.author) for m in stored].count(("staff", STAFF)) == 1


async def test_an_unreadable_desk_channel_refuses_with_the_reason(bot: Bot) -> None:
    conv, esc_id, _ = await escalate_visitor(bot)
    bot.slack.failures["conversations.members"] = "channel_not_found"
    await bot.click("take_over", esc_id, STAFF)
    await bot.settle()
    (refusal,) = bot.slack.calls_to("chat.postEphemeral", user=STAFF)
    assert "cannot read the members of C0SUPPORT (channel_not_found)" in refusal.body["text"]
    stored = bot.app.store.get_conversation(conv[0])
    assert stored is not None and not stored.paused


async def test_a_staff_reply_from_a_stranger_is_refused(bot: Bot) -> None:
    conv, _, desk_ts = await escalate_visitor(bot)
    await bot.event(in_desk_thread(desk_ts, "I'll take it", "500.1", user=STRANGER), "Ev1")
    await bot.settle()
    (refusal,) = bot.slack.calls_to("chat.postEphemeral")
    assert refusal.body["user"] == STRANGER and refusal.body["thread_ts"] == desk_ts
    assert all(m.role != "staff" for m in bot.app.store.messages(conv[0]))


async def test_hand_back_returns_the_conversation_to_the_agent(bot: Bot) -> None:
    conv, esc_id, desk_ts = await escalate_visitor(bot)
    await bot.click("take_over", esc_id, STAFF)
    await bot.settle()
    await bot.click("hand_back", esc_id, STAFF)
    await bot.settle()
    stored = bot.app.store.get_conversation(conv[0])
    assert stored is not None and not stored.paused
    note = bot.slack.calls_to("chat.postMessage", channel=DESK, thread_ts=desk_ts)[-1]
    assert "handed the conversation back" in note.body["text"]
    back = await bot.widget_says(conv, "Does Pipelines support Docker builds?", "m2")
    assert "Docker" in back["replies"][0]["text"]

    await bot.click("resolve", esc_id, STAFF)
    await bot.settle()
    esc = bot.app.store.get_escalation(esc_id)
    assert esc is not None and esc.status == "resolved"


async def test_a_slack_customer_asking_for_a_person_is_served_in_their_thread(bot: Bot) -> None:
    await bot.event(dm("I want to talk to a person", "100.1"), "Ev1")
    await bot.settle()
    (answer,) = bot.slack.calls_to("chat.postMessage", channel=DM)
    assert answer.body["thread_ts"] == "100.1" and "person" in answer.body["text"]
    (post,) = bot.slack.calls_to("chat.postMessage", channel=DESK)
    summary = " ".join(b["text"]["text"] for b in post.body["blocks"] if b["type"] == "section")
    assert "Customer on slack" in summary and action_ids(post)[0] == "gatebot:take_over:1"
    esc = bot.app.store.escalations("open")[0]
    desk_ts = post.answer["ts"]
    assert esc.thread == f"{DESK}:{desk_ts}"

    await bot.event(in_desk_thread(desk_ts, "Hello, Sam here. How can I help?", "500.1"), "Ev2")
    await bot.settle()
    staff_posts = bot.slack.calls_to("chat.postMessage", channel=DM)
    assert len(staff_posts) == 2
    assert staff_posts[-1].body["thread_ts"] == "100.1"
    assert staff_posts[-1].body["text"] == "Hello, Sam here. How can I help?"

    # The customer answers in their thread: relayed to the desk thread, no agent reply.
    await bot.event(dm("my build is broken", "100.2", thread_ts="100.1"), "Ev3")
    await bot.settle()
    assert len(bot.slack.calls_to("chat.postMessage", channel=DM)) == 2
    relayed = bot.slack.calls_to("chat.postMessage", channel=DESK, thread_ts=desk_ts)[-1]
    assert relayed.body["text"] == "customer: my build is broken"


@pytest.mark.parametrize("bot", ["routing"], indirect=True)
async def test_the_escalation_menu_is_buttons_and_a_click_moves_the_escalation(bot: Bot) -> None:
    await bot.event(dm("I need to talk to someone now", "100.1"), "Ev1")
    await bot.settle(60)  # pre-flight's first turn loads its encoders
    said, menu = bot.slack.calls_to("chat.postMessage", channel=DM)
    assert "They answer Monday to Friday" in said.body["text"]  # what happens next, and when
    assert action_ids(menu) == ["gatebot:menu:0", "gatebot:menu:1"]
    buttons = [e for b in menu.body["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert [b.get("style") for b in buttons] == ["primary", None]  # support recommended
    sales = buttons[1]
    assert sales["value"] == "Account executives for demos and quotes."
    (desk_post,) = bot.slack.calls_to("chat.postMessage", channel=DESK)
    esc = bot.app.store.escalations("open")[0]
    assert esc.helpdesk == "support"

    # The customer picks sales: said as their message, recorded in the turn, escalation moved.
    await bot.press(sales, CUSTOMER, DM, "100.1")
    await bot.settle()
    moved = bot.app.store.get_escalation(esc.id or 0)
    assert moved is not None and (moved.helpdesk, moved.status) == ("sales", "open")
    assert moved.delivery is not None and "no discord channel running" in moved.delivery
    note = bot.slack.calls_to("chat.postMessage", channel=DESK, thread_ts=desk_post.answer["ts"])
    assert note[-1].body["text"] == "The customer chose sales."
    turn = bot.app.store.turns(esc.conversation_id)[-1]
    assert turn.record["message"]["text"] == "Account executives for demos and quotes."
    assert turn.record["move"]["why"].startswith("chose the sales help desk")
    assert turn.record["move"]["escalate"] is True
    answer = bot.slack.calls_to("chat.postMessage", channel=DM)[-1]
    assert answer.body["thread_ts"] == "100.1"
    assert answer.body["text"].startswith("Our team has been told")
    assert len(bot.app.store.escalations()) == 1  # moved, not asked twice


async def test_a_click_checks_membership_once_and_the_holder_replies_unchecked(bot: Bot) -> None:
    conv, esc_id, desk_ts = await escalate_visitor(bot)
    bot.slack.names[STAFF] = "Sam Lee"
    await bot.click("take_over", esc_id, STAFF)
    await bot.settle()
    assert len(bot.slack.calls_to("conversations.members")) == 1
    await bot.event(in_desk_thread(desk_ts, "Hi, Sam here.", "500.1"), "Ev1")
    await bot.settle()
    assert len(bot.slack.calls_to("conversations.members")) == 1  # the holder is not asked again

    # A reloaded widget reads who wrote: the Slack id and the display name.
    url = f"{bot.base}/api/conversations/{conv[0]}"
    async with bot.http.get(url, headers={"Authorization": f"Bearer {conv[1]}"}) as resp:
        messages = (await resp.json())["messages"]
    staff = [m for m in messages if m["role"] == "staff"]
    assert [m["author"] for m in staff] == [{"id": STAFF, "name": "Sam Lee"}]
    assert all(m["author"] is None for m in messages if m["role"] != "staff")


async def test_a_staff_message_redelivered_after_a_restart_reaches_the_customer_once(
    bot: Bot,
) -> None:
    conv, _, desk_ts = await escalate_visitor(bot)
    await bot.event(in_desk_thread(desk_ts, "Hi, Sam here.", "500.1"), "Ev1")
    await bot.settle()
    # A restart: the Slack channel stops and starts again (nothing kept in memory), then Slack
    # retries the same event.
    await bot.channel.stop()
    await bot.channel.start()
    await bot.event(in_desk_thread(desk_ts, "Hi, Sam here.", "500.1"), "Ev1", retry=1)
    await bot.settle()
    staff = [m for m in bot.app.store.messages(conv[0]) if m.role == "staff"]
    assert [m.text for m in staff] == ["Hi, Sam here."]


# -- Socket Mode -------------------------------------------------------------------------------


async def test_socket_mode_acks_the_envelope_and_replies(
    slack: SlackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slack_env(monkeypatch, slack, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=APP_TOKEN)
    settings = Settings(pack=ACME, data_dir=tmp_path, recorders=[], channels=["slack"])
    app = App(settings, extra_plugins=[gatebot_slack])
    await app.start()
    try:
        channel = app.channel("slack")
        assert isinstance(channel, SlackChannel) and channel.settings.mode == "socket"
        assert not any(path == "/slack/events" for _, path, _ in app.host.routes)
        (opened,) = slack.calls_to("apps.connections.open")
        assert opened.token == APP_TOKEN  # the app-level token, only for the websocket
        payload = {
            "type": "event_callback",
            "event_id": "Ev1",
            "team_id": "T1",
            "event": dm("Does Pipelines support Docker builds?", "100.1"),
        }
        envelope_id = await slack.send_envelope(payload)
        ack = await slack.next_ack()
        assert ack["envelope_id"] == envelope_id
        (post,) = await slack.wait_for("chat.postMessage", channel=DM)
        assert post.body["thread_ts"] == "100.1" and "Docker" in post.body["text"]
        assert post.token == BOT_TOKEN
    finally:
        await app.stop()


# -- configuration and rendering ---------------------------------------------------------------


def test_the_mode_follows_the_credentials() -> None:
    http = SlackSettings.from_env({"SLACK_BOT_TOKEN": "x", "SLACK_SIGNING_SECRET": "s"})
    assert http.mode == "http" and http.problems == []
    socket = SlackSettings.from_env({"SLACK_BOT_TOKEN": "x", "SLACK_APP_TOKEN": "a"})
    assert socket.mode == "socket" and socket.problems == []
    both = {"SLACK_BOT_TOKEN": "x", "SLACK_APP_TOKEN": "a", "SLACK_SIGNING_SECRET": "s"}
    assert SlackSettings.from_env(both).mode == "http"
    assert SlackSettings.from_env({**both, "SLACK_MODE": "socket"}).mode == "socket"
    assert SlackSettings.from_env({}).problems == [
        "SLACK_BOT_TOKEN (the bot token, xoxb-...) is not set",
        "SLACK_SIGNING_SECRET is not set (HTTP mode verifies every request)",
    ]
    wrong = SlackSettings.from_env({"SLACK_MODE": "rtm", "SLACK_BOT_TOKEN": "x"})
    assert wrong.problems == ["SLACK_MODE must be http or socket, not 'rtm'"]
    only_bot = SlackSettings.from_env({"SLACK_MODE": "socket", "SLACK_BOT_TOKEN": "x"})
    assert only_bot.problems == ["SLACK_APP_TOKEN (the app-level token, xapp-...) is not set"]
    assert SlackSettings.from_env({"SLACK_API_URL": "http://h/api"}).api_url == "http://h/api/"
    oauth = {**both, "SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "c"}
    assert "unset them" in SlackSettings.from_env(oauth).problems[0]
    secret = SlackSettings.from_env({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s3"})
    assert "xoxb-1" not in repr(secret) and "s3" not in repr(secret)


async def test_named_but_unconfigured_it_says_what_is_missing(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("SLACK_MODE", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    settings.channels = ["slack"]
    app = App(settings, extra_plugins=[gatebot_slack])
    await app.start()
    try:
        channel = app.channel("slack")
        assert isinstance(channel, SlackChannel) and not channel.configured
        assert "SLACK_BOT_TOKEN" in caplog.text
        conv, _ = app.store.create_conversation("web", with_token=True)
        await app.agent.handle(conv, "I want to talk to a person", "1")
        esc = app.store.escalations("open")[0]
        assert esc.delivery is not None and "slack channel is not running" in esc.delivery
    finally:
        await app.stop()


async def test_http_mode_without_the_web_channel_is_a_config_error(
    slack: SlackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slack_env(monkeypatch, slack, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SECRET)
    settings = Settings(pack=ACME, data_dir=tmp_path, recorders=[], channels=["slack"])
    app = App(settings, extra_plugins=[gatebot_slack])
    try:
        with pytest.raises(ConfigError, match="needs the web channel"):
            await app.start()
    finally:
        await app.stop()


async def test_a_refused_bot_token_fails_the_start(
    slack: SlackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slack_env(monkeypatch, slack, SLACK_BOT_TOKEN="xoxb-revoked", SLACK_APP_TOKEN=APP_TOKEN)
    slack.failures["auth.test"] = "invalid_auth"
    settings = Settings(pack=ACME, data_dir=tmp_path, recorders=[], channels=["slack"])
    app = App(settings, extra_plugins=[gatebot_slack])
    try:
        with pytest.raises(ConfigError, match="Slack refused SLACK_BOT_TOKEN: invalid_auth"):
            await app.start()
    finally:
        await app.stop()
    assert slack.calls_to("apps.connections.open") == []


async def test_blocks_slack_refuses_still_leave_the_words(bot: Bot) -> None:
    bot.slack.reject_blocks = True
    card = {"type": "card", "card": "contact", "contact": "sales@acme.example"}
    await bot.channel.post_replies(DM, "100.1", [{"type": "text", "text": "Hi"}, card])
    posts = bot.slack.calls_to("chat.postMessage", channel=DM)
    delivered = [p.body["text"] for p in posts if "blocks" not in p.body]
    assert delivered == ["Hi", "Get in touch: sales@acme.example"]


def test_cards_are_block_kit_with_link_buttons() -> None:
    contact = {"type": "card", "card": "contact", "contact": "sales@acme.example"}
    text, body = blocks.render_reply({**contact, "outcome": "demo"}) or ("", [])
    assert text == "Get in touch: sales@acme.example"
    assert "Write to us about your demo." in body[0]["text"]["text"]
    assert "<mailto:sales@acme.example|sales@acme.example>" in body[0]["text"]["text"]
    (button,) = body[1]["elements"]
    assert button["url"] == "mailto:sales@acme.example"
    assert blocks.LINK_ACTION.match(button["action_id"])

    booking = {"type": "card", "card": "booking", "url": "https://cal.example/acme"}
    text, body = blocks.render_reply(booking) or ("", [])
    assert body[1]["elements"][0]["url"] == "https://cal.example/acme"
    unsafe = blocks.render_reply({**booking, "url": "javascript:alert(1)"})
    assert unsafe is not None and all(b["type"] != "actions" for b in unsafe[1])


def test_text_is_escaped_split_and_cited() -> None:
    reply = {
        "type": "text",
        "text": "<!channel> & more",
        "citations": [{"key": "docker", "title": "Docker builds", "source": "docs/docker.md"}],
    }
    text, body = blocks.render_reply(reply) or ("", [])
    assert text == "<!channel> & more"  # notification fallback: plain text
    assert body[0]["text"]["text"] == "&lt;!channel&gt; &amp; more"
    assert body[1]["elements"][0]["text"] == "Source: Docker builds"
    long = blocks.render_reply({"type": "text", "text": "line\n" * 1500})
    assert long is not None and len(long[1]) == 3
    assert all(len(b["text"]["text"]) <= blocks.SECTION_LIMIT for b in long[1])
    assert blocks.render_reply({"type": "text", "text": "  "}) is None


def test_slack_markup_reads_as_plain_text() -> None:
    said = "<@U1> see <https://acme.example|the docs> &amp; <#C1|general>, <!here> 1 &lt; 2"
    assert (
        blocks.plain_text(said) == "@U1 see the docs (https://acme.example) & #general, @here 1 < 2"
    )
    assert blocks.parse_desk_action("gatebot:resolve:12") == ("resolve", 12)
    assert blocks.parse_desk_action("gatebot:link:contact") is None
