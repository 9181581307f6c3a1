"""The Slack channel adapter: its lifecycle, what it posts, and the help-desk protocol.

Owns the slack-bolt ``AsyncApp`` and how requests reach it (``POST /slack/events`` on the web
channel's server in HTTP mode, a Socket Mode websocket otherwise), the Web API client, and the
background tasks that run turns after Slack has been acknowledged. Deciding what an incoming
event means is :mod:`gatebot_slack.inbound`; drawing messages is :mod:`gatebot_slack.blocks`.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import ChannelUnavailable, ConfigError
from bot.extend.channel import ChannelAdapter
from bot.extend.host import ChannelHost, Handler
from bot.helpdesk import HelpDeskError
from bot.leasekeeper import LeasedConnection
from bot.packs.model import HelpDesk
from bot.store import Conversation, Escalation
from gatebot_slack import blocks
from gatebot_slack.config import SlackError, SlackSettings
from gatebot_slack.inbound import Inbound

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
#: How long ``start`` waits for the Socket Mode websocket before giving up.
CONNECT_TIMEOUT = 30.0
#: How long ``stop`` lets turns in flight finish (and post their replies) before cancelling.
DRAIN_TIMEOUT = 10.0
#: Pages of ``conversations.members`` read at most (200 each) when checking a staff member.
MEMBER_PAGES = 50
#: What slack-bolt warns when SLACK_BOT_TOKEN is in the environment and a client is given too.
#: The client carries that same token (and the SLACK_API_URL base), so the warning is noise.
BOLT_TOKEN_WARNING = "`token` will be unused"


@contextmanager
def _without(message: str) -> Iterator[None]:
    """Drop one known, misleading slack-bolt log line while the AsyncApp is built."""

    def keep(record: logging.LogRecord) -> bool:
        return message not in record.getMessage()

    bolt_log = logging.getLogger("slack_bolt.AsyncApp")
    bolt_log.addFilter(keep)
    try:
        yield
    finally:
        bolt_log.removeFilter(keep)


def split_thread(thread: str) -> tuple[str, str]:
    """A thread id ``"<channel>:<ts>"`` as (channel, ts). Channel ids never contain a colon."""
    channel, sep, ts = thread.partition(":")
    if not sep or not channel or not ts:
        raise SlackError(f"{thread!r} is not a Slack thread id (channel:ts)")
    return channel, ts


def events_route(host: ChannelHost) -> Handler:
    """``POST /slack/events`` for ``register_routes``: handed to the Slack adapter while it runs
    (it is built only when channels start, after routes are registered)."""

    async def slack_events(request: web.Request) -> web.Response:
        adapter = host.channel(SlackChannel.name)
        if not isinstance(adapter, SlackChannel):
            return web.json_response({"error": "the slack channel is not running"}, status=503)
        return await adapter.handle_http(request)

    return slack_events


class SlackChannel(ChannelAdapter):
    name = "slack"

    def __init__(self, host: ChannelHost) -> None:
        super().__init__(host)
        self.settings = SlackSettings.from_env()
        self.bolt: AsyncApp | None = None
        self.client: AsyncWebClient | None = None
        self.bot_user_id: str | None = None
        self.inbound = Inbound(self)
        self._session: aiohttp.ClientSession | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self._lease: LeasedConnection | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._thread_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    @property
    def configured(self) -> bool:
        return not self.settings.problems

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        problems = self.settings.problems
        if problems:
            # Named in GATEBOT_CHANNELS but not set up: say what is missing, and stay out of
            # the way of the other channels.
            log.warning("slack channel not started: %s", "; ".join(problems))
            return
        if self.settings.mode == "http" and self.host.channel("web") is None:
            raise ConfigError(
                "SLACK_MODE=http needs the web channel to serve /slack/events: add web to "
                "GATEBOT_CHANNELS, or use Socket Mode (SLACK_MODE=socket and SLACK_APP_TOKEN)"
            )
        self._session = aiohttp.ClientSession()
        self.client = AsyncWebClient(
            token=self.settings.bot_token, base_url=self.settings.api_url, session=self._session
        )
        try:
            await self._check_token(self.client)
            # process_before_response: each listener only files a task and returns, so the ack
            # still leaves at once, and no listener runs in a future nobody awaits on stop.
            with _without(BOLT_TOKEN_WARNING):
                bolt = AsyncApp(
                    name="gatebot",
                    client=self.client,
                    signing_secret=self.settings.signing_secret,
                    process_before_response=True,
                )
            self.inbound.register(bolt)
            self.bolt = bolt
            if self.settings.mode == "socket":
                # One Socket Mode connection for all the processes: the lease's holder has it.
                self._lease = self.host.leased_connection(
                    "slack-socket", lambda: self._connect_socket(bolt), self._close_socket
                )
                await self._lease.start()
        except BaseException:
            self._lease = None
            await self._close_session()
            self.bolt = self.client = None
            raise
        standby = self._lease is not None and not self._lease.held
        log.info(
            "slack channel up (%s mode, bot user %s%s)",
            self.settings.mode,
            self.bot_user_id,
            "; another process holds the socket" if standby else "",
        )

    async def _check_token(self, client: AsyncWebClient) -> None:
        """auth.test at start: a refused token fails here, not on the first customer."""
        try:
            auth = await client.auth_test()
        except SlackApiError as exc:
            error = exc.response.get("error")
            raise ConfigError(f"Slack refused SLACK_BOT_TOKEN: {error}") from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            # Out of reach, not refused: the app retries this channel in the background.
            raise ChannelUnavailable(
                f"cannot reach Slack at {self.settings.api_url}: {exc}"
            ) from None
        self.bot_user_id = auth.get("user_id")

    async def _connect_socket(self, bolt: AsyncApp) -> None:
        handler = AsyncSocketModeHandler(bolt, self.settings.app_token, web_client=self.client)
        self._socket = handler
        try:
            # slack_sdk retries a failed connect forever; a start must end.
            await asyncio.wait_for(handler.connect_async(), CONNECT_TIMEOUT)
        except TimeoutError:
            await self._close_socket()
            raise SlackError(
                f"no Socket Mode connection within {CONNECT_TIMEOUT:.0f}s; check SLACK_APP_TOKEN "
                "(an app-level token with connections:write) and that Socket Mode is enabled"
            ) from None

    async def stop(self) -> None:
        lease, self._lease = self._lease, None
        if lease is not None:
            await lease.stop()  # first: no new events while the last turns finish
        await self._close_socket()
        self.bolt = None
        try:
            await asyncio.wait_for(self.drain(), DRAIN_TIMEOUT)
        except TimeoutError:
            log.warning("slack: %d task(s) still running at stop; cancelled", len(self._tasks))
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        await self._close_session()
        self.client = None

    async def _close_socket(self) -> None:
        handler, self._socket = self._socket, None
        if handler is None:
            return
        await handler.close_async()
        # close() cancels the client's loops without waiting; wait, so none outlives the stop.
        sm = handler.client
        loops = [sm.message_processor, sm.current_session_monitor, sm.message_receiver]
        await asyncio.gather(*(t for t in loops if t is not None), return_exceptions=True)

    async def _close_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    # -- background work -----------------------------------------------------------------------

    def spawn(self, work: Coroutine[Any, Any, None], what: str) -> None:
        """Run ``work`` after the ack. Tracked, so ``stop`` (and tests) can wait for it."""
        task = asyncio.create_task(self._guarded(work, what), name=f"slack: {what}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _guarded(work: Coroutine[Any, Any, None], what: str) -> None:
        try:
            await work
        except Exception:  # Slack was already answered; the log is the only place left
            log.exception("slack: %s failed", what)

    async def drain(self) -> None:
        """Wait until no background task runs (those a task starts included)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # -- HTTP mode -----------------------------------------------------------------------------

    async def handle_http(self, request: web.Request) -> web.Response:
        """``POST /slack/events``: Events API and interactivity. slack-bolt checks the signature
        (401 when it is wrong), answers url_verification, and runs the listeners."""
        bolt = self.bolt
        if bolt is None:
            return web.json_response({"error": "the slack channel is not running"}, status=503)
        response = await bolt.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(response)

    # -- posting -------------------------------------------------------------------------------

    def web(self) -> AsyncWebClient:
        if self.client is None:
            why = "; ".join(self.settings.problems) or "it is not started"
            raise SlackError(f"the slack channel is not running: {why}")
        return self.client

    async def post_replies(
        self, channel: str, thread_ts: str, replies: list[dict[str, Any]]
    ) -> None:
        for text, body in blocks.render_replies(replies):
            try:
                await self.web().chat_postMessage(
                    channel=channel, thread_ts=thread_ts, text=text, blocks=body
                )
            except SlackApiError as exc:
                if exc.response.get("error") not in ("invalid_blocks", "invalid_blocks_format"):
                    raise
                # Slack refused the drawing, not the message: the customer still gets the words.
                log.warning("slack refused the blocks of a reply; sent as plain text: %s", exc)
                await self.web().chat_postMessage(channel=channel, thread_ts=thread_ts, text=text)

    async def note(self, thread: str, text: str) -> None:
        """A plain line in a thread (a help-desk action's result)."""
        channel, ts = split_thread(thread)
        await self.web().chat_postMessage(channel=channel, thread_ts=ts, text=text)

    async def whisper(self, channel: str, user: str, text: str, thread_ts: str | None) -> None:
        """A line only ``user`` sees (a refusal)."""
        await self.web().chat_postEphemeral(
            channel=channel, user=user, text=text, thread_ts=thread_ts
        )

    async def display_name(self, user: str) -> str | None:
        """How a staff member's name shows to the customer (their Slack display name, else real
        name); None when Slack will not say (no users:read scope): the id stands in."""
        try:
            found = await self.web().users_info(user=user)
        except SlackApiError as exc:
            log.info("slack: no name for %s (%s)", user, exc.response.get("error"))
            return None
        profile = (found.get("user") or {}).get("profile") or {}
        name = profile.get("display_name") or profile.get("real_name")
        return str(name) if name else None

    async def send(self, conversation_id: str, replies: list[dict[str, Any]]) -> None:
        """Staff replies to a Slack customer: into the customer's thread."""
        await super().send(conversation_id, replies)  # live watchers see it too
        conv = await self.host.load_conversation(conversation_id)
        if conv is None or conv.channel != self.name or not conv.external_id:
            return
        channel, thread_ts = split_thread(conv.external_id)
        await self.post_replies(channel, thread_ts, replies)

    # -- conversations -------------------------------------------------------------------------

    async def conversation_for(self, thread: str, user: str | None = None) -> Conversation:
        """The conversation of a customer thread, created on its first message. Locked per
        thread, so a mention and its message event arriving together make one conversation."""
        lock = self._thread_locks.get(thread)
        if lock is None:
            lock = self._thread_locks[thread] = asyncio.Lock()
        async with lock:
            # The store's get-or-create also holds across processes (a unique index decides).
            return await self.host.open_thread_conversation(self.name, thread, user)

    # -- the help-desk protocol (bot.helpdesk.HelpDeskChannel) ---------------------------------

    async def post_escalation(self, desk: HelpDesk, escalation: Escalation, summary: str) -> str:
        text, body = blocks.escalation(escalation.id or 0, summary)
        resp = await self.web().chat_postMessage(channel=desk.target, text=text, blocks=body)
        # Slack answers with the channel's id even when the target was given another way.
        return f"{resp.get('channel') or desk.target}:{resp['ts']}"

    async def post_to_thread(self, desk: HelpDesk, thread: str, text: str) -> None:
        channel, ts = split_thread(thread)
        await self.web().chat_postMessage(
            channel=channel, thread_ts=ts, text=text, blocks=blocks.sections(text)
        )

    async def is_member(self, desk: HelpDesk, staff: str) -> bool:
        cursor: str | None = None
        for _ in range(MEMBER_PAGES):
            try:
                page = await self.web().conversations_members(
                    channel=desk.target, limit=200, cursor=cursor
                )
            except SlackApiError as exc:
                # Membership unknown is a refusal, with the reason the staff member can act on.
                error = exc.response.get("error")
                raise HelpDeskError(
                    f"cannot read the members of {desk.target} ({error}); the desk's target "
                    "must be a channel id the bot is in"
                ) from None
            if staff in (page.get("members") or []):
                return True
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                return False
        log.warning("slack: %s has more members than gatebot reads", desk.target)
        return False
