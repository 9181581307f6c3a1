"""The Discord channel adapter: the client's life (log in, stay connected, close) and delivery.

Owns the discord.py client, the settings read from the environment (DISCORD_BOT_TOKEN,
DISCORD_STAFF_ROLE_ID), sending rendered replies to a conversation's thread or DM, and the help-desk
side: posting an escalation with its buttons, relaying customer messages into its thread, and
deciding who counts as a member of a desk. What each event does is in ``handlers``; how a message
looks is in ``render``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import Any

import aiohttp
import discord
import yarl

from bot.errors import ChannelUnavailable, ConfigError
from bot.extend.channel import ChannelAdapter
from bot.extend.host import ChannelHost
from bot.leasekeeper import LeasedConnection
from bot.packs.model import HelpDesk
from bot.store import Escalation
from gatebot_discord.handlers import Handlers
from gatebot_discord.render import (
    MAX_THREAD_NAME,
    Outgoing,
    escalation_post,
    render_replies,
    split_text,
    truncate,
)

log = logging.getLogger(__name__)

_DEFAULT_API = discord.http.Route.BASE
_DEFAULT_GATEWAY = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY

#: How long ``start`` waits for the gateway's READY before returning (it keeps connecting).
READY_TIMEOUT = 30.0
#: How long ``stop`` waits for the client's task to end after closing it.
STOP_TIMEOUT = 10.0
#: Customer text and staff names are echoed back; none of it may ping anyone.
NO_PINGS = discord.AllowedMentions.none()


def intents() -> discord.Intents:
    """The gateway intents the bot asks for. Only ``message_content`` is privileged."""
    wanted = discord.Intents.none()
    wanted.guilds = True  # channels, threads and the bot's own member: the caches everything uses
    wanted.guild_messages = True  # mentions, customer threads, staff in escalation threads
    wanted.dm_messages = True  # customers writing to the bot directly
    # Privileged (enable it in the developer portal): without it, messages that do not mention
    # the bot arrive empty, and staff replies and customers' follow-ups in threads do not.
    wanted.message_content = True
    return wanted


def _snowflake(raw: str | None, name: str) -> int | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise ConfigError(f"{name} must be a Discord id (digits only), got {raw!r}")
    return int(raw)


class DiscordChannel(ChannelAdapter):
    name = "discord"

    def __init__(self, host: ChannelHost, client: discord.Client | None = None) -> None:
        super().__init__(host)
        self._token = os.environ.get("DISCORD_BOT_TOKEN", "").strip()  # never logged
        self.staff_role = _snowflake(
            os.environ.get("DISCORD_STAFF_ROLE_ID"), "DISCORD_STAFF_ROLE_ID"
        )
        self.handlers = Handlers(self)
        self._client: discord.Client | None = None
        self._own_client = client is None
        if client is not None:  # tests hand in a client driven by dpytest
            self._attach(client)
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._lease: LeasedConnection | None = None
        self._rest_only = False  # logged in for REST only: another process has the gateway

    @property
    def configured(self) -> bool:
        return bool(self._token)

    @property
    def client(self) -> discord.Client:
        # Built on first use, not with the adapter: the app builds every registered adapter,
        # and discord.py's client logs voice warnings that a run without Discord must not show.
        if self._client is None:
            return self._attach(discord.Client(intents=intents()))
        return self._client

    def _attach(self, client: discord.Client) -> discord.Client:
        for handler in (
            self.handlers.on_ready,
            self.handlers.on_message,
            self.handlers.on_interaction,
        ):
            client.event(handler)  # registered under the handler's name, as @client.event does
        self._client = client
        return client

    # -- the client's life ---------------------------------------------------------------------

    async def start(self) -> None:
        """Log in and connect in the background; return once ready, or after READY_TIMEOUT."""
        if not self._token:
            raise ConfigError(
                "DISCORD_BOT_TOKEN is not set: create a bot in the Discord developer portal and "
                "set its token (see the README's Discord section)"
            )
        _point_at_discord()
        # One gateway connection for all the processes: the lease's holder has it.
        lease = self.host.leased_connection(
            "discord-gateway", self._connect_gateway, self._close_gateway
        )
        await lease.start()
        self._lease = lease
        if not lease.held:
            try:
                await self._login_for_rest()
            except BaseException:
                await self.stop()
                raise

    async def _login_for_rest(self) -> None:
        """Without the gateway, log in to the REST API only: staff replies made in this process
        still reach Discord customers."""
        try:
            await self.client.login(self._token)
        except Exception as error:
            await self._discard_client()
            if _unreachable(error):
                raise ChannelUnavailable(_why_not(error)) from error
            raise ConfigError(_why_not(error)) from error
        self._rest_only = True

    async def _discard_client(self) -> None:
        with contextlib.suppress(Exception):
            await self.client.close()
        self._rest_only = False
        if self._own_client:
            self._client = None  # a closed client does not start again: the next is new

    async def _connect_gateway(self) -> None:
        """Connect in the background; return once ready, or after READY_TIMEOUT."""
        if self._rest_only:  # taking over: the REST-only client cannot open the gateway too
            await self._discard_client()
        self._ready.clear()
        # reconnect=True: discord.py resumes or re-identifies on its own after a dropped gateway.
        self._task = asyncio.create_task(
            self.client.start(self._token, reconnect=True), name="discord-gateway"
        )
        ready = asyncio.create_task(self._ready.wait())
        try:
            await asyncio.wait(
                {self._task, ready}, timeout=READY_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            ready.cancel()
        if self._task.done():
            error = self._task.exception() if not self._task.cancelled() else None
            self._task = None
            await self._discard_client()
            if _unreachable(error):
                raise ChannelUnavailable(_why_not(error)) from error
            raise ConfigError(_why_not(error)) from error
        self._task.add_done_callback(_gateway_ended)
        if not self._ready.is_set():
            log.warning("discord: not ready after %.0f s; still connecting", READY_TIMEOUT)

    def connected(self) -> None:
        """The gateway said READY (again after a full reconnect)."""
        log.info(
            "discord: connected as %s, in %d server(s)", self.client.user, len(self.client.guilds)
        )
        self._ready.set()

    async def stop(self) -> None:
        """Close the client that ``start`` started (a client never started is left alone)."""
        lease, self._lease = self._lease, None
        if lease is not None:
            await lease.stop()  # closes the gateway where this process held it
        if self._rest_only:
            await self._discard_client()

    async def _close_gateway(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        if not self.client.is_closed():
            await self.client.close()
        if not task.done():
            done, _ = await asyncio.wait({task}, timeout=STOP_TIMEOUT)
            if not done:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self._own_client:
            self._client = None  # a closed client does not start again: the next is new

    # -- delivery ------------------------------------------------------------------------------

    async def send(self, conversation_id: str, replies: list[dict[str, Any]]) -> None:
        """Replies from outside a turn (a staff reply): into the customer's thread or DM."""
        await super().send(conversation_id, replies)  # live events, as for every channel
        conv = await self.host.load_conversation(conversation_id)
        if conv is None or conv.channel != self.name or not conv.external_id:
            return
        await self.post(await self.messageable(conv.external_id), replies)

    async def post(
        self,
        where: discord.abc.Messageable,
        replies: list[dict[str, Any]],
        reference: discord.Message | None = None,
    ) -> None:
        for n, out in enumerate(render_replies(replies, self.staff_name)):
            await self._send(where, out, reference if n == 0 else None)

    async def notice(self, where: discord.abc.Messageable, text: str) -> None:
        """A short line from the bot itself (to staff: why their message went nowhere)."""
        for chunk in split_text(text):
            await where.send(chunk, allowed_mentions=NO_PINGS)

    async def _send(
        self,
        where: discord.abc.Messageable,
        out: Outgoing,
        reference: discord.Message | None = None,
    ) -> discord.Message:
        kwargs = out.send_kwargs()
        if reference is not None:
            kwargs["reference"] = reference
            kwargs["mention_author"] = False
        return await where.send(allowed_mentions=NO_PINGS, **kwargs)

    async def _resolve(self, channel_id: int) -> Any:
        """A channel, thread or DM from the cache, else from the API; None when it is gone."""
        channel = self.client.get_channel(channel_id)
        if channel is None:
            try:
                channel = await self.client.fetch_channel(channel_id)
            except (discord.NotFound, discord.Forbidden):
                return None
        return channel

    async def messageable(self, channel_id: str) -> discord.abc.Messageable:
        """Where to send for a stored id. Unknown to the cache and the API (a DM channel after a
        restart can be): a partial channel, which needs only the id to post."""
        channel = await self._resolve(int(channel_id))
        if isinstance(channel, discord.abc.Messageable):
            return channel
        return self.client.get_partial_messageable(int(channel_id))

    def staff_name(self, staff: str) -> str:
        user = self.client.get_user(int(staff)) if staff.isdigit() else None
        return user.display_name if user is not None else "Staff"

    # -- the help desk (bot.helpdesk.HelpDeskChannel) ------------------------------------------

    async def _desk_channel(self, desk: HelpDesk) -> discord.TextChannel:
        target = _snowflake(desk.target, f"help desk {desk.name!r} target")
        channel = await self._resolve(target) if target is not None else None
        if not isinstance(channel, discord.TextChannel):
            raise ConfigError(
                f"help desk {desk.name!r}: {desk.target} is not a text channel the bot can see"
            )
        return channel

    async def post_escalation(self, desk: HelpDesk, escalation: Escalation, summary: str) -> str:
        """Post the escalation with its buttons, open a thread on it, and return the thread's id.

        A thread started from a message has the message's id, so the id returned is the same
        whether or not the thread could be made; without one, staff reply to the post instead.
        """
        channel = await self._desk_channel(desk)
        out = escalation_post(escalation.id or 0, escalation.kind, summary)
        post = await self._send(channel, out)
        if out.view is not None:
            # Presses are routed by custom id in on_interaction (so they survive a restart);
            # stopping the view drops discord.py's in-memory copy, which would only leak.
            out.view.stop()
        name = truncate(f"Escalation #{escalation.id}: {escalation.reason}", MAX_THREAD_NAME)
        try:
            thread = await post.create_thread(name=name)
        except discord.HTTPException as exc:
            log.warning(
                "no thread for escalation #%s in #%s (%s); staff reply to the post instead",
                escalation.id,
                channel.name,
                exc,
            )
            return str(post.id)
        return str(thread.id)

    async def post_to_thread(self, desk: HelpDesk, thread: str, text: str) -> None:
        where = await self._resolve(int(thread))
        reference = None
        if not isinstance(where, discord.abc.Messageable):
            # No thread (see post_escalation): answer the post itself in the desk channel.
            where = await self._desk_channel(desk)
            reference = where.get_partial_message(int(thread))
        for n, chunk in enumerate(split_text(text)):
            kwargs: dict[str, Any] = {"reference": reference} if reference and n == 0 else {}
            await where.send(chunk, allowed_mentions=NO_PINGS, **kwargs)

    async def is_member(self, desk: HelpDesk, staff: str) -> bool:
        """Whether ``staff`` (a Discord user id) is on the desk: they can see its channel, and,
        when DISCORD_STAFF_ROLE_ID is set, they also hold that role."""
        if not staff.isdigit():
            return False
        channel = await self._desk_channel(desk)
        member = channel.guild.get_member(int(staff))
        if member is None:  # the member cache is partial without the members intent
            try:
                member = await channel.guild.fetch_member(int(staff))
            except discord.NotFound:
                return False
        if self.staff_role is not None and member.get_role(self.staff_role) is None:
            return False
        return channel.permissions_for(member).view_channel


def _point_at_discord() -> None:
    """Where discord.py connects: DISCORD_API_URL (REST, e.g. ``https://discord.com/api/v10``)
    and DISCORD_GATEWAY_URL (the first websocket, ``wss://gateway.discord.gg/``), for a proxy or
    a test double. discord.py keeps both on its classes, so they hold for the whole process."""
    api = os.environ.get("DISCORD_API_URL", "").strip().rstrip("/")
    gateway = os.environ.get("DISCORD_GATEWAY_URL", "").strip()
    discord.http.Route.BASE = api or _DEFAULT_API
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = (
        yarl.URL(gateway) if gateway else _DEFAULT_GATEWAY
    )


def _unreachable(error: BaseException | None) -> bool:
    """No connection to Discord (DNS, refused, reset, a timeout, no gateway): worth retrying,
    unlike a refused token or a missing intent."""
    return isinstance(
        error,
        OSError
        | asyncio.TimeoutError
        | aiohttp.ClientError
        | discord.GatewayNotFound
        | discord.ConnectionClosed,
    ) or (isinstance(error, discord.HTTPException) and error.status >= 500)


def _why_not(error: BaseException | None) -> str:
    """What went wrong at start, in words that say what to fix (never the token itself)."""
    if isinstance(error, discord.PrivilegedIntentsRequired):
        return (
            "Discord refused the connection: enable the Message Content intent for the bot in the "
            "developer portal (Bot > Privileged Gateway Intents)"
        )
    if isinstance(error, discord.LoginFailure):
        return "Discord refused DISCORD_BOT_TOKEN; copy the bot's token again (Bot > Reset Token)"
    if error is None:
        return "the Discord client stopped before it was ready"
    return f"could not connect to Discord: {type(error).__name__}: {error}"


def _gateway_ended(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("discord: the gateway connection ended: %s", _why_not(task.exception()))
