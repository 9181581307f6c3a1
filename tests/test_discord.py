"""The Discord channel on discord.py's real client, driven by dpytest (no network).

What is real: discord.py's Client, ConnectionState, Message, Thread, DMChannel, Member, Embed,
View and Interaction objects, its event dispatch and its send / create_thread / interaction
response code; gatebot's App, agent, store and help desks. What stands in for Discord: dpytest's
fake HTTP API and gateway, plus two things dpytest 0.7 lacks, added below the same way dpytest
fakes everything else: starting a thread from a message (``DiscordServer``), and the interaction
callback endpoint (``interaction_responses``). A button press is an INTERACTION_CREATE payload
handed to discord.py's own parser, as the gateway would deliver it.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import AsyncIterator, Awaitable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import discord
import discord.ext.test as dpytest
import gatebot_discord
import pytest
from discord.ext.test import backend, factories
from discord.webhook.async_ import AsyncWebhookAdapter
from gatebot_discord import render
from gatebot_discord.channel import DiscordChannel, intents

from bot.app import App
from bot.config import Settings
from bot.errors import ConfigError
from bot.outcomes import KINDS

ROOT = Path(__file__).resolve().parent.parent

T = TypeVar("T")
WAIT = 10.0  # every wait on the event loop is bounded by this
#: The permissions the README asks for: view, send, send in threads, create public threads,
#: embed links, read message history.
BOT_PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    send_messages_in_threads=True,
    create_public_threads=True,
    embed_links=True,
    read_message_history=True,
)


async def bounded(awaitable: Awaitable[T]) -> T:
    async with asyncio.timeout(WAIT):
        return await awaitable


class DiscordServer(backend.FakeHttp):
    """dpytest's fake Discord API, plus threads started from a message and a record of every
    message payload sent (dpytest keeps content and embeds, but drops components)."""

    def __init__(self, loop: Any = None) -> None:
        super().__init__(loop=loop)
        self.payloads: list[tuple[int, dict[str, Any]]] = []

    async def send_message(self, channel_id: str | int, *, params: Any) -> Any:
        # dpytest's send_message reads ``channel`` from its caller's frame, which is now this one.
        channel = backend._get_higher_locs(1).get("channel")
        if isinstance(channel, discord.Thread):
            me = channel.guild.me
            if not channel.permissions_for(me).send_messages_in_threads:
                raise discord.Forbidden(backend.FakeRequest(403, "Forbidden"), "Missing Access")
        self.payloads.append((int(channel_id), dict(params.payload or {})))
        return await super().send_message(int(channel_id), params=params)

    async def start_thread_with_message(
        self,
        channel_id: str | int,
        message_id: str | int,
        *,
        name: str,
        auto_archive_duration: Any,
        rate_limit_per_user: int | None = None,
        reason: str | None = None,
    ) -> Any:
        channel = self.state.get_channel(int(channel_id))
        assert isinstance(channel, discord.TextChannel)
        if not channel.permissions_for(channel.guild.me).create_public_threads:
            raise discord.Forbidden(backend.FakeRequest(403, "Forbidden"), "Missing Permissions")
        if channel.guild.get_thread(int(message_id)) is not None:
            raise discord.HTTPException(
                backend.FakeRequest(400, "Bad Request"), "A thread has already been created"
            )
        assert self.state.user is not None
        data: dict[str, Any] = {
            "id": str(message_id),  # as on Discord: the thread takes the message's id
            "type": discord.ChannelType.public_thread.value,
            "guild_id": str(channel.guild.id),
            "parent_id": str(channel.id),
            "owner_id": str(self.state.user.id),
            "name": name,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": auto_archive_duration,
                "archive_timestamp": discord.utils.utcnow().isoformat(),
                "locked": False,
            },
            "message_count": 0,
            "member_count": 1,
            "rate_limit_per_user": 0,
        }
        self.state.parse_thread_create(data)  # type: ignore[arg-type]  # the gateway's THREAD_CREATE
        return data


@dataclass
class World:
    client: discord.Client
    server: DiscordServer
    guild: discord.Guild
    general: discord.TextChannel
    desk: discord.TextChannel
    dana: discord.Member  # a customer
    sam: discord.Member  # staff
    stranger: discord.Member  # neither: cannot see the desk channel
    me: discord.Member

    def sent(self) -> list[discord.Message]:
        """What the bot sent since the last call, oldest first."""
        out = []
        while not dpytest.sent_queue.empty():
            out.append(dpytest.sent_queue.get_nowait())
        return out


@pytest.fixture
async def world(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[World]:
    monkeypatch.setattr(backend, "FakeHttp", DiscordServer)
    wanted = intents()
    # dpytest builds the guild through GUILD_MEMBER_ADD events, which discord.py caches only with
    # the members intent; on Discord, the bot's own member comes with GUILD_CREATE instead, and
    # staff are fetched, so production does not ask for it.
    wanted.members = True
    client = discord.Client(intents=wanted)
    await client._async_setup_hook()  # what login does first: binds the client to this loop
    dpytest.configure(
        client,
        guilds=["Acme"],
        text_channels=["general", "sales-desk"],
        voice_channels=0,
        members=["dana", "sam", "stranger"],
    )
    config = dpytest.get_config()
    guild = config.guilds[0]
    general, desk = config.channels
    dana, sam, stranger = config.members
    assert isinstance(general, discord.TextChannel) and isinstance(desk, discord.TextChannel)
    me = guild.me
    role = backend.make_role("gatebot", guild, permissions=BOT_PERMISSIONS.value)
    await dpytest.add_role(me, role)
    # The desk channel is private to staff: hidden from everyone else, here the stranger.
    overwrite(desk, stranger, view_channel=False)
    assert not desk.permissions_for(stranger).view_channel
    assert isinstance(client.http, DiscordServer)
    try:
        yield World(client, client.http, guild, general, desk, dana, sam, stranger, me)
    finally:
        await bounded(dpytest.empty_queue())


def overwrite(channel: discord.TextChannel, member: discord.Member, **perms: bool) -> None:
    """A member's permission overwrite on a channel, as the gateway's CHANNEL_UPDATE brings it.

    (dpytest's set_permission_overrides writes the type as "member", which discord.py 2 reads
    as neither member nor role, so it has no effect.)"""
    allow, deny = discord.PermissionOverwrite(**perms).pair()
    data = factories.dict_from_channel(channel)
    data["permission_overwrites"] = [
        {"id": str(member.id), "type": 1, "allow": str(allow.value), "deny": str(deny.value)}
    ]
    backend.get_state().parse_channel_update(data)


def write_pack(tmp_path: Path, desk_id: int) -> Path:
    """The sample pack, with its help desk on Discord (the desk channel) as the default."""
    pack = tmp_path / "pack"
    shutil.copytree(ROOT / "knowledge" / "acme", pack)
    (pack / "helpdesks.yaml").write_text(
        "helpdesks:\n"
        "  - name: sales\n"
        "    channel: discord\n"
        f'    target: "{desk_id}"\n'
        "    default: true\n"
        # The pack's pre-flight names this desk too; here it is the same channel.
        "  - name: support\n"
        "    channel: discord\n"
        f'    target: "{desk_id}"\n'
    )
    return pack


@pytest.fixture
async def app(tmp_path: Path, world: World, request: pytest.FixtureRequest) -> AsyncIterator[App]:
    # Pre-flight's mode: a test of the escalation menu asks for routing (indirect parameter).
    preflight = getattr(request, "param", "off")
    settings = Settings(
        pack=write_pack(tmp_path, world.desk.id),
        data_dir=tmp_path,
        recorders=[],
        preflight=preflight,
    )
    gb = App(settings, extra_plugins=[gatebot_discord])
    await gb.start(channels=False)
    gb.channels.append(DiscordChannel(gb.host, client=world.client))
    try:
        yield gb
    finally:
        await gb.stop()
        await bounded(dpytest.run_all_events())
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert not [t for t in others if not t.done()], "the Discord channel left tasks running"


@pytest.fixture(autouse=True)
def no_swallowed_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Handlers log a failure instead of raising it: a test passes only if none was logged."""
    yield
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, f"logged errors: {[r.getMessage() for r in errors]}"


def adapter_of(app: App) -> DiscordChannel:
    adapter = app.channel("discord")
    assert isinstance(adapter, DiscordChannel)
    return adapter


async def say(
    world: World, text: str, channel: discord.abc.Messageable, member: discord.Member
) -> discord.Message:
    """A user's message through dpytest's gateway; returns once the bot's handlers finished."""
    return await bounded(dpytest.message(text, channel, member))


def mention(world: World, text: str) -> str:
    return f"<@{world.me.id}> {text}"


@pytest.fixture
def interaction_responses(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The interaction callback endpoint, recorded: discord.py builds the request for real."""
    calls: list[dict[str, Any]] = []

    async def request(self: Any, route: Any, session: Any, **kwargs: Any) -> Any:
        calls.append({"method": route.method, "path": route.path, **(kwargs.get("payload") or {})})
        return {"interaction": {"id": str(route.webhook_id), "type": 3}}

    monkeypatch.setattr(AsyncWebhookAdapter, "request", request)
    return calls


async def press(
    world: World,
    post: discord.Message,
    custom_id: str,
    who: discord.Member,
    values: list[str] | None = None,
) -> None:
    """A button press (or with ``values`` a choice in a select menu) as Discord's gateway delivers
    it: INTERACTION_CREATE, parsed by discord.py."""
    data: dict[str, Any] = {"custom_id": custom_id}
    if values is None:
        data["component_type"] = discord.ComponentType.button.value
    else:
        data.update(component_type=discord.ComponentType.string_select.value, values=values)
    payload = {
        "id": str(factories.make_id()),
        "application_id": str(world.me.id),
        "type": discord.InteractionType.component.value,
        "token": "interaction-token",
        "version": 1,
        "guild_id": str(world.guild.id),
        "channel_id": str(post.channel.id),
        "channel": {"id": str(post.channel.id), "type": 0, "guild_id": str(world.guild.id)},
        "member": {**factories.dict_from_member(who), "permissions": "0"},
        "message": factories.dict_from_message(post),
        "data": data,
        "app_permissions": str(BOT_PERMISSIONS.value),
        "locale": "en-US",
        "attachment_size_limit": 8 * 1024 * 1024,
        "entitlements": [],
        "authorizing_integration_owners": {},
    }
    world.client._connection.parse_interaction_create(payload)  # type: ignore[arg-type]
    await bounded(dpytest.run_all_events())


def menu_options(world: World, message: discord.Message) -> list[str]:
    """The values of the select menu sent with ``message``."""
    payloads = [p for channel_id, p in world.server.payloads if channel_id == message.channel.id]
    payload = next(p for p in payloads if p.get("embeds") == [e.to_dict() for e in message.embeds])
    menus = [b for row in payload["components"] for b in row["components"] if "options" in b]
    return [o["value"] for menu in menus for o in menu["options"]]


def ephemeral(response: dict[str, Any]) -> str:
    """The text of an interaction response, checked to be a message only the presser sees."""
    assert response["method"] == "POST" and response["path"].endswith("/callback")
    assert response["type"] == discord.InteractionResponseType.channel_message.value
    assert response["data"]["flags"] == discord.MessageFlags(ephemeral=True).value
    return str(response["data"]["content"])


def buttons(world: World, message: discord.Message) -> dict[str, str]:
    """The buttons and menus sent with ``message``: label (a menu's placeholder) -> custom id
    (or url), from the payload."""
    payloads = [p for channel_id, p in world.server.payloads if channel_id == message.channel.id]
    payload = next(p for p in payloads if p.get("embeds") == [e.to_dict() for e in message.embeds])
    rows = payload.get("components") or []
    return {
        b.get("label") or b["placeholder"]: b.get("custom_id") or b.get("url")
        for row in rows
        for b in row["components"]
    }


# -- customers -------------------------------------------------------------------------------


async def test_a_mention_gets_one_reply_in_a_thread_of_its_own(app: App, world: World) -> None:
    asked = await say(
        world, mention(world, "Does Pipelines support Docker builds?"), world.general, world.dana
    )
    sent = world.sent()
    assert len(sent) == 1
    reply = sent[0]
    assert isinstance(reply.channel, discord.Thread)
    assert reply.channel.id == asked.id and reply.channel.parent_id == world.general.id
    assert reply.channel.name == f"{world.dana.display_name}: Does Pipelines support Docker builds?"
    assert "Docker" in (reply.content or "")
    conv = app.store.find_conversation("discord", str(asked.id))
    assert conv is not None and len(app.store.turns(conv.id)) == 1

    # In its thread the customer goes on without mentioning the bot.
    await say(world, "And does it cache layers?", reply.channel, world.dana)
    follow_up = world.sent()
    assert len(follow_up) == 1 and follow_up[0].channel.id == reply.channel.id
    assert len(app.store.turns(conv.id)) == 2

    # Chatter in the channel that does not mention the bot is not for it.
    await say(world, "lunch anyone?", world.general, world.dana)
    assert world.sent() == []


async def test_without_thread_permission_the_reply_stays_in_the_channel(
    app: App, world: World
) -> None:
    overwrite(world.general, world.me, create_public_threads=False)
    asked = await say(world, mention(world, "What is Pipelines?"), world.general, world.dana)
    sent = world.sent()
    assert len(sent) == 1 and sent[0].channel.id == world.general.id
    payload = world.server.payloads[-1][1]
    assert payload["message_reference"]["message_id"] == asked.id  # a reply to the question
    assert payload["allowed_mentions"] == {"parse": [], "replied_user": False}
    assert app.store.find_conversation("discord", str(world.general.id)) is not None


async def test_a_direct_message_gets_a_reply(app: App, world: World) -> None:
    dm = await bounded(world.dana.create_dm())
    await say(world, "Does Pipelines support Docker builds?", dm, world.dana)
    sent = world.sent()
    assert len(sent) == 1 and isinstance(sent[0].channel, discord.DMChannel)
    assert sent[0].channel.id == dm.id and "Docker" in (sent[0].content or "")
    assert app.store.find_conversation("discord", str(dm.id)) is not None


async def test_a_redelivered_message_makes_one_turn_and_one_reply(app: App, world: World) -> None:
    asked = await say(
        world, mention(world, "Does Pipelines support Docker builds?"), world.general, world.dana
    )
    assert len(world.sent()) == 1
    conv = app.store.find_conversation("discord", str(asked.id))
    assert conv is not None

    # A reconnect redelivers it: once straight into the handler, once as the gateway's
    # MESSAGE_CREATE payload again through discord.py's parser.
    await bounded(adapter_of(app).handlers.on_message(asked))
    assert backend._cur_config is not None
    raw = next(m for m in backend._cur_config.messages[world.general.id] if m["id"] == asked.id)
    world.client._connection.parse_message_create(raw)  # type: ignore[arg-type]
    await bounded(dpytest.run_all_events())

    assert world.sent() == []
    assert len(app.store.turns(conv.id)) == 1
    assert len([m for m in app.store.messages(conv.id) if m.role == "customer"]) == 1
    assert "gatebot_duplicate_messages_total" in app.metrics.render()


async def test_a_failing_turn_is_logged_and_the_client_goes_on(
    app: App, world: World, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = app.agent.handle

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the store is down")

    monkeypatch.setattr(app.agent, "handle", broken)
    await say(world, mention(world, "What is Pipelines?"), world.general, world.dana)
    failed = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in failed] == ["discord on_message failed"]
    assert "the store is down" in caplog.text
    caplog.clear()

    monkeypatch.setattr(app.agent, "handle", real)
    await say(
        world, mention(world, "Does Pipelines support Docker builds?"), world.general, world.dana
    )
    assert ["Docker" in (m.content or "") for m in world.sent()] == [True]


async def test_bots_are_ignored_including_itself(app: App, world: World) -> None:
    await say(
        world, mention(world, "Does Pipelines support Docker builds?"), world.general, world.me
    )
    assert world.sent() == []
    assert app.store.escalations() == [] and app.store.pending() == []


# -- the help desk ---------------------------------------------------------------------------


def desk_post(world: World, sent: list[discord.Message]) -> discord.Message:
    return next(m for m in sent if m.channel.id == world.desk.id and m.embeds)


async def test_a_discord_customer_reaches_staff_and_back(
    app: App, world: World, interaction_responses: list[dict[str, Any]]
) -> None:
    asked = await say(
        world, mention(world, "I want to talk to a person"), world.general, world.dana
    )
    sent = world.sent()
    customer_thread = world.guild.get_thread(asked.id)
    assert customer_thread is not None
    to_customer = [m for m in sent if m.channel.id == customer_thread.id]
    assert len(to_customer) == 1 and "passing you to a person" in (to_customer[0].content or "")

    post = desk_post(world, sent)
    assert post.embeds[0].title == "Escalation #1 (asked)"
    assert "Customer on discord" in (post.embeds[0].description or "")
    ids = buttons(world, post)
    assert ids == {
        "Take over": "gatebot:desk:take_over:1",
        "Hand back": "gatebot:desk:hand_back:1",
        "Resolve as…": "gatebot:desk:resolve:1",
    }
    esc = app.store.escalations("open")[0]
    assert esc.thread == str(post.id) and esc.delivery == "posted to discord"
    desk_thread = world.guild.get_thread(post.id)
    assert desk_thread is not None and desk_thread.parent_id == world.desk.id

    await press(world, post, ids["Take over"], world.sam)
    assert ephemeral(interaction_responses[-1]).startswith("You have escalation #1")
    conv = app.store.find_conversation("discord", str(asked.id))
    assert conv is not None and conv.paused

    # Staff write in the escalation's thread: it reaches the customer's thread, with the author.
    staff_says = await say(world, "Hi Dana, Sam here.", desk_thread, world.sam)
    relayed = world.sent()
    assert [m.channel.id for m in relayed] == [customer_thread.id]
    # The author as the desk's members see them (their display name in the server).
    name = discord.utils.escape_markdown(world.sam.display_name)
    assert relayed[0].content == f"**{name}** (staff): Hi Dana, Sam here."
    await bounded(adapter_of(app).handlers.on_message(staff_says))  # redelivered: not again
    assert world.sent() == []

    # The customer, while staff have the conversation: the agent is quiet, staff see it.
    await say(world, "Thanks Sam, it is about pricing.", customer_thread, world.dana)
    quiet = world.sent()
    assert [(m.channel.id, m.content) for m in quiet] == [
        (desk_thread.id, "customer: Thanks Sam, it is about pricing.")
    ]

    await press(world, post, ids["Hand back"], world.sam)
    assert "handed back" in ephemeral(interaction_responses[-1])
    await say(world, "Does Pipelines support Docker builds?", customer_thread, world.dana)
    back = world.sent()
    assert len(back) == 1 and "Docker" in (back[0].content or "")

    options = menu_options(world, post)
    assert options == list(KINDS)
    await press(world, post, ids["Resolve as…"], world.sam, values=["refund-please"])
    assert ephemeral(interaction_responses[-1]).startswith("Not resolved: choose one of trial")
    await press(world, post, ids["Resolve as…"], world.sam, values=["demo"])
    assert ephemeral(interaction_responses[-1]) == "Escalation #1 resolved: demo."
    done = app.store.get_escalation(esc.id or 0)
    assert done is not None and (done.status, done.staff) == ("resolved", str(world.sam.id))
    assert done.outcome == "demo"
    (label,) = app.store.outcomes(esc.conversation_id)
    assert (label.kind, label.source, label.staff) == ("demo", "escalation", str(world.sam.id))
    assert [t["seq"] for t in label.turns] == [1, 2, 3]  # the turns that led here


@pytest.mark.parametrize("app", ["routing"], indirect=True)
async def test_the_escalation_menu_is_buttons_and_a_press_moves_the_escalation(
    app: App, world: World, interaction_responses: list[dict[str, Any]]
) -> None:
    asked = await say(
        world, mention(world, "I need to talk to someone now"), world.general, world.dana
    )
    sent = world.sent()
    customer_thread = world.guild.get_thread(asked.id)
    assert customer_thread is not None
    menus = [m for m in sent if m.channel.id == customer_thread.id and m.embeds]
    assert menus, [(m.channel.id, m.content) for m in sent]
    menu = menus[0]
    assert menu.embeds[0].title == "A person will take over"
    choices = buttons(world, menu)
    assert choices == {"support": "gatebot:offer:support", "sales": "gatebot:offer:sales"}
    first_post = desk_post(world, sent)
    esc = app.store.escalations("open")[0]
    assert esc.thread == str(first_post.id)
    other = "support" if esc.helpdesk == "sales" else "sales"

    # Dana presses the other team: said as her message, recorded in the turn, the escalation moves.
    await press(world, menu, choices[other], world.dana)
    moved = app.store.get_escalation(esc.id or 0)
    assert moved is not None and moved.helpdesk == other and moved.status == "open"
    after = world.sent()
    old_thread = world.guild.get_thread(first_post.id)
    assert old_thread is not None
    assert (old_thread.id, f"The customer chose {other}.") in [
        (m.channel.id, m.content) for m in after
    ]
    new_post = desk_post(world, after)
    assert moved.thread == str(new_post.id) != esc.thread
    said = [m.content or "" for m in after if m.channel.id == customer_thread.id]
    assert said and said[-1].startswith("Our team has been told")
    turn = app.store.turns(esc.conversation_id)[-1]
    assert turn.record["message"]["text"] == other
    assert turn.record["move"]["why"].startswith(f"chose the {other} help desk")
    assert len(app.store.escalations()) == 1


async def test_staff_in_the_thread_reach_a_widget_visitor(
    app: App, world: World, interaction_responses: list[dict[str, Any]]
) -> None:
    conv, _ = app.store.create_conversation("web", with_token=True)
    await bounded(app.agent.handle(conv, "I want to talk to a person", "1"))
    post = desk_post(world, world.sent())
    assert "Customer on web" in (post.embeds[0].description or "")
    ids = buttons(world, post)

    await press(world, post, ids["Take over"], world.sam)
    paused = app.store.get_conversation(conv.id)
    assert paused is not None and paused.paused

    events = app.events.subscribe(conv.id)
    desk_thread = world.guild.get_thread(post.id)
    assert desk_thread is not None
    await say(world, "Hello from the sales team.", desk_thread, world.sam)
    seen = [events.get_nowait() for _ in range(events.qsize())]
    staff = [e for e in seen if e["type"] == "replies"]
    assert len(staff) == 1
    assert staff[0]["replies"][0]["text"] == "Hello from the sales team."
    assert staff[0]["replies"][0]["author"] == str(world.sam.id)
    assert world.sent() == []  # a widget visitor is not on Discord: nothing posted there

    await press(world, post, ids["Hand back"], world.sam)
    resumed = app.store.get_conversation(conv.id)
    assert resumed is not None and not resumed.paused
    back = await bounded(app.agent.handle(resumed, "Does Pipelines support Docker builds?", "2"))
    assert "Docker" in back.replies[0]["text"]


async def test_only_desk_members_may_press_or_reply(
    app: App, world: World, interaction_responses: list[dict[str, Any]]
) -> None:
    conv, _ = app.store.create_conversation("web", with_token=True)
    await bounded(app.agent.handle(conv, "I want to talk to a person", "1"))
    post = desk_post(world, world.sent())
    for label in ("Take over", "Resolve as…"):
        await press(world, post, buttons(world, post)[label], world.stranger, values=["trial"])
        answer = ephemeral(interaction_responses[-1])
        assert answer == "Only members of the sales help desk can do that."
    esc = app.store.escalations()[0]
    assert esc.status == "open"
    still = app.store.get_conversation(conv.id)
    assert still is not None and not still.paused


async def test_an_unknown_button_or_a_resolved_escalation_is_answered_plainly(
    app: App, world: World, interaction_responses: list[dict[str, Any]]
) -> None:
    conv, _ = app.store.create_conversation("web", with_token=True)
    await bounded(app.agent.handle(conv, "I want to talk to a person", "1"))
    post = desk_post(world, world.sent())
    await press(world, post, "someone-elses-button", world.sam)
    assert interaction_responses == []  # not ours: not answered
    await press(world, post, render.custom_id("take_over", 99), world.sam)
    assert ephemeral(interaction_responses[-1]) == "Escalation #99 is not known here."
    # A post from before the menu had a plain Resolve button: a press records "resolved".
    await press(world, post, render.custom_id("resolve", 1), world.sam)
    assert [o.kind for o in app.store.outcomes(conv.id)] == ["resolved"]
    await press(world, post, buttons(world, post)["Take over"], world.sam)
    answer = ephemeral(interaction_responses[-1])
    assert answer == "Could not take over: escalation #1 is resolved."
    # Writing in the thread of a resolved escalation: staff are told it went nowhere.
    desk_thread = world.guild.get_thread(post.id)
    assert desk_thread is not None
    await say(world, "one more thing", desk_thread, world.sam)
    assert [m.content for m in world.sent()] == [
        "Not sent to the customer: escalation #1 is resolved."
    ]
    # The buttons are routed by custom id, so discord.py keeps no view in memory for them.
    assert not world.client._connection._view_store._views


# -- rendering -------------------------------------------------------------------------------


async def test_replies_render_as_discord_messages() -> None:
    text = {
        "type": "text",
        "text": "Yes, it does.",
        "citations": [
            {"key": "a", "title": "Docker builds", "source": "docs/a.md"},
            {"key": "b", "title": "Docker builds", "source": "docs/b.md"},
        ],
    }
    booking = {
        "type": "card",
        "card": "booking",
        "url": "https://cal.example/acme",
        "outcome": "demo",
    }
    contact = {
        "type": "card",
        "card": "contact",
        "contact": "sales@acme.example",
        "outcome": "demo",
    }
    staff = {"type": "text", "text": "Hi", "role": "staff", "author": "42", "citations": []}
    out = render.render_replies([text, booking, contact, staff], lambda _id: "Sam_*")
    assert out[0].content == "Yes, it does.\n-# Source: Docker builds"
    assert out[1].embeds[0].title == "Book a time" and out[1].view is not None
    link = out[1].view.children[0]
    assert isinstance(link, discord.ui.Button) and link.url == "https://cal.example/acme"
    # Discord refuses mailto: link buttons, so the address is shown, not linked.
    assert out[2].view is None and out[2].embeds[0].fields[0].value == "`sales@acme.example`"
    assert out[3].content == "**Sam\\_\\*** (staff): Hi"

    long = render.render_replies([{"type": "text", "text": "word " * 1000}])
    assert len(long) == 3 and all(len(o.content or "") <= render.MAX_CONTENT for o in long)
    assert render.parse_custom_id(render.custom_id("hand_back", 7)) == ("hand_back", 7)
    assert render.parse_custom_id("gatebot:desk:delete:7") is None


# -- the client's life -----------------------------------------------------------------------


class GatewayStandIn(discord.Client):
    """A client whose start does not dial Discord: it says READY, or fails as told."""

    def __init__(self, fail: BaseException | None = None) -> None:
        super().__init__(intents=intents())
        self.fail = fail
        self.token: str | None = None
        self.closed = asyncio.Event()

    async def start(self, token: str, *, reconnect: bool = True) -> None:
        self.token = token
        await self._async_setup_hook()  # as login does
        if self.fail is not None:
            raise self.fail
        self.dispatch("ready")
        await self.closed.wait()

    async def close(self) -> None:
        self.closed.set()

    def is_closed(self) -> bool:
        return self.closed.is_set()


async def test_start_returns_once_ready_and_stop_ends_the_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISCORD_BOT_TOKEN", "secret-token")
    gb = App(Settings(pack=ROOT / "knowledge" / "acme", data_dir=tmp_path, recorders=[]))
    client = GatewayStandIn()
    adapter = DiscordChannel(gb.host, client=client)
    assert adapter.configured
    await bounded(adapter.start())
    assert client.token == "secret-token" and adapter._ready.is_set()
    await bounded(adapter.stop())
    assert client.is_closed() and adapter._task is None
    gb.store.close()


async def test_a_refused_token_fails_start_without_showing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    gb = App(Settings(pack=ROOT / "knowledge" / "acme", data_dir=tmp_path, recorders=[]))
    monkeypatch.delenv("DISCORD_BOT_TOKEN", raising=False)
    unset = DiscordChannel(gb.host, client=GatewayStandIn())
    assert not unset.configured
    with pytest.raises(ConfigError, match="DISCORD_BOT_TOKEN is not set"):
        await unset.start()

    monkeypatch.setenv("DISCORD_BOT_TOKEN", "secret-token")
    refused = DiscordChannel(gb.host, client=GatewayStandIn(discord.LoginFailure("Improper token")))
    with pytest.raises(ConfigError, match="refused DISCORD_BOT_TOKEN") as caught:
        await bounded(refused.start())
    intents_off = DiscordChannel(
        gb.host, client=GatewayStandIn(discord.PrivilegedIntentsRequired(0))
    )
    with pytest.raises(ConfigError, match="Message Content intent"):
        await bounded(intents_off.start())
    assert "secret-token" not in str(caught.value) and "secret-token" not in caplog.text
    gb.store.close()


def test_the_plugin_registers_the_channel(settings: Settings) -> None:
    gb = App(settings, extra_plugins=[gatebot_discord])
    assert DiscordChannel in gb.registry.channels
    assert DiscordChannel(gb.host)._client is None  # no discord.py client until one is needed
    gb.store.close()
