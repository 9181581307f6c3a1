"""The channel host: the few operations a channel adapter (and the web server) may use.

Adapters receive a :class:`ChannelHost` instead of the whole app: hand a customer message to the
agent, find or create a conversation and read what the web API shows of it, act on an
escalation for staff, publish and subscribe live events, count metrics, read settings and the
pack, and serve the HTTP routes plugins registered. The app builds one and passes it to every
adapter factory. This module imports nothing that builds the app, so adapters never reach it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

from bot.admission import TurnAdmission
from bot.config import Settings
from bot.events import EventBus
from bot.lease import Lease, connection_lease
from bot.leasekeeper import LeasedConnection
from bot.metrics import Metrics
from bot.outcomes import labels
from bot.packs import context as site_context
from bot.packs.model import Pack
from bot.store import (
    Conversation,
    Escalation,
    FlowCheckpoint,
    FlowRun,
    Message,
    Outcome,
    Store,
    Turn,
    TurnLabel,
)
from bot.store.runner import StoreRunner
from bot.store.turnlock import TurnLocks

T = TypeVar("T")
#: An aiohttp handler (``async (request) -> response``), kept loose so ``bot`` needs no aiohttp.
Handler = Callable[[Any], Awaitable[Any]]
#: What ``register_routes`` collects: (method, path, handler).
Route = tuple[str, str, Handler]


class Answer(Protocol):
    """What a turn hands back to the channel (the agent's ``TurnResult``)."""

    replies: list[dict[str, Any]]
    duplicate: bool

    @property
    def record(self) -> Mapping[str, Any]:
        """The turn record (read only here: a channel renders, it never edits a record)."""


class Agent(Protocol):
    locks: TurnLocks  # one turn of a conversation at a time (and a consent recorded between)

    async def handle(
        self, conv: Conversation, text: str, external_id: str | None, inbox_key: str | None = None
    ) -> Answer: ...


#: The help desks' one entry point for staff (``bot.helpdesk.HelpDesks.act``).
StaffAct = Callable[..., Awaitable[Any]]


class ChannelHost:
    """What the app lends a channel adapter. Attribute names match the app's where they mean
    the same thing (``settings``, ``pack``, ``events``, ``metrics``, ``channel``, ``info``), so an
    adapter written against the app that used only those keeps working."""

    def __init__(
        self,
        *,
        settings: Settings,
        pack: Pack,
        store: Store,
        agent: Agent,
        act: StaffAct,
        events: EventBus,
        metrics: Metrics,
        channel: Callable[[str], object | None],
        info: Callable[[], dict[str, Any]],
        disabled_flows: Callable[[], dict[str, str]] = dict,
        routes: list[Route] | None = None,
        db: StoreRunner | None = None,
        admission: TurnAdmission | None = None,
    ) -> None:
        self.settings, self.pack, self.events, self.metrics = settings, pack, events, metrics
        self._store, self._agent, self._act = store, agent, act
        self._db = db or StoreRunner(store)
        #: The turns running in this process, and the limit the web API sheds at.
        self.admission = admission or TurnAdmission(settings.max_turns, metrics)
        self.channel = channel  #: a running channel adapter by name, or None
        self.info = info  #: what /healthz reports: pack, provider, retriever
        self.disabled_flows = disabled_flows  #: flows that cannot run, with why
        #: HTTP routes other plugins registered (``register_routes``); the web channel serves them.
        self.routes: list[Route] = routes if routes is not None else []

    def lease(self, name: str) -> Lease:
        """A lease named ``name`` where this deployment's processes meet (``bot.lease``)."""
        return connection_lease(name, self.settings, self._store)

    def leased_connection(
        self,
        name: str,
        connect: Callable[[], Awaitable[None]],
        disconnect: Callable[[], Awaitable[None]],
    ) -> LeasedConnection:
        """A connection only one process of several may hold (a Slack Socket Mode websocket, a
        Discord gateway): ``start()`` it instead of connecting, ``stop()`` it instead of
        disconnecting; it calls ``connect`` in the process holding the lease (``bot.lease``)."""
        lease = connection_lease(name, self.settings, self._store)
        return LeasedConnection(lease, connect, disconnect, self.metrics)

    # -- turns and staff actions ---------------------------------------------------------------

    async def handle(
        self,
        conv: Conversation,
        text: str,
        external_id: str | None,
        inbox_key: str | None = None,
        *,
        shed: bool = False,
    ) -> Answer:
        """One customer message through a turn (idempotent on the channel and ``inbox_key``).
        With ``shed``, a process already running its limit of turns raises ``Overloaded`` at
        once (a client that can retry: the web API); without, the turn waits its turn."""
        with self.admission.slot(shed=shed):
            return await self._agent.handle(conv, text, external_id, inbox_key=inbox_key)

    async def act(self, verb: str, escalation_id: int, staff: str, **kw: Any) -> Any:
        """A staff action on an escalation: take_over, reply, hand_back or resolve. See
        :meth:`bot.helpdesk.HelpDesks.act` for the keywords; a refusal raises HelpDeskError."""
        return await self._act(verb, escalation_id, staff, **kw)

    # -- the same reads off the event loop, within the database deadline ------------------------
    # Each raises ``DatabaseUnavailable`` (a channel answers 503) when the database does not
    # answer in time; a database that hangs never stalls the process's other requests.

    async def open_conversation(
        self, channel: str, language: str, verified_user_id: str | None = None
    ) -> tuple[Conversation, str]:
        return await self._db.call(self.create_conversation, channel, language, verified_user_id)

    async def load_conversation(self, conversation_id: str) -> Conversation | None:
        return await self._db.call(self._store.get_conversation, conversation_id)

    async def load_message(self, channel: str, external_id: str) -> Message | None:
        return await self._db.call(self._store.find_message, channel, external_id)

    async def load_transcript(self, conversation_id: str) -> tuple[list[Message], list[Turn]]:
        """A conversation's messages and turns, read together."""

        def both() -> tuple[list[Message], list[Turn]]:
            return self._store.messages(conversation_id), self._store.turns(conversation_id)

        return await self._db.call(both)

    async def read_store(self, query: Callable[..., T], *args: Any) -> T:
        """``query(store, *args)``, one of :mod:`bot.store.inspect`'s reads (the staff
        inspector's), off the event loop within the database deadline."""
        return await self._db.call(query, self._store, *args)

    async def load_last_message_id(self, conversation_id: str) -> int | None:
        return await self._db.call(self._store.last_message_id, conversation_id)

    async def check_database(self) -> None:
        """Raise when the database cannot be reached in time (the health check)."""
        await self._db.call(self._store.ping)

    async def share_site_context(
        self, conversation_id: str, source: str, page: dict[str, str] | None
    ) -> dict[str, Any]:
        """Record the visitor's consent (``source``: who collected it) and, when given, the page
        (``page`` None: consent refused, nothing about the page kept). Returns the consent, the
        pack's hypothesis for the page and the greeting it shapes (bot.turn.sitecontext)."""

        def save() -> dict[str, Any]:
            conv = self._store.get_conversation(conversation_id)
            if conv is None:
                raise LookupError(conversation_id)
            site = site_context.consented(self.pack, source, page)
            self._store.update_conversation(conversation_id, state={**conv.state, "site": site})
            said = site_context.greeting(self.pack, site, conv.language)
            return {"consent": site["consent"], "hypothesis": site["hypothesis"], "greeting": said}

        # Under the turn lock: a turn writes the whole state back, and would drop a consent
        # recorded while it ran.
        async with self._agent.locks.hold(conversation_id):
            return await self._db.call(save)

    async def open_thread_conversation(
        self, channel: str, external_id: str, user_id: str | None = None
    ) -> Conversation:
        """:meth:`conversation_for` off the event loop."""
        return await self._db.call(self.conversation_for, channel, external_id, user_id)

    async def load_thread_conversation(self, channel: str, external_id: str) -> Conversation | None:
        """A platform thread's conversation, if it has one (:meth:`find_conversation`)."""
        return await self._db.call(self._store.find_conversation, channel, external_id)

    async def load_escalation_of(self, thread: str) -> Escalation | None:
        """The escalation a help-desk thread belongs to (:meth:`find_escalation`)."""
        return await self._db.call(self._store.find_escalation, thread)

    async def load_flow_runs(self, conversation_id: str | None = None) -> list[FlowRun]:
        return await self._db.call(self._store.flow_runs, conversation_id)

    async def load_flow_run(self, run_id: str) -> FlowRun | None:
        return await self._db.call(self._store.get_flow_run, run_id)

    async def load_checkpoints(self, run_id: str) -> list[FlowCheckpoint]:
        return await self._db.call(self._store.checkpoints, run_id)

    async def rewind_flow(self, rewind: Callable[..., T], run_id: str, at_checkpoint: int) -> T:
        """:meth:`rewind_flow_run` off the event loop."""
        return await self._db.call(self.rewind_flow_run, rewind, run_id, at_checkpoint)

    async def fork_flow(self, fork: Callable[..., T], run_id: str, **kw: Any) -> T:
        """:meth:`fork_flow_run` off the event loop: its reads and writes on one database
        thread, within the database deadline."""
        return await self._db.call(self.fork_flow_run, fork, run_id, **kw)

    # -- the synchronous calls under those, for code already off the event loop ---------------
    # Each blocks its thread on the database. On the event loop, use the awaitable one above
    # (tests guard this: bot/store/guard.py).

    # -- conversations -------------------------------------------------------------------------

    def create_conversation(
        self, channel: str, language: str, verified_user_id: str | None = None
    ) -> tuple[Conversation, str]:
        """A new conversation with its customer token (shown once, stored hashed). Pass a
        ``verified_user_id`` only after checking it (``bot.identity.verify``)."""
        conv, token = self._store.create_conversation(
            channel, with_token=True, language=language, verified_user_id=verified_user_id
        )
        assert token is not None
        return conv, token

    def conversation_for(
        self, channel: str, external_id: str, user_id: str | None = None
    ) -> Conversation:
        """The conversation of a platform thread, created on first use (once across processes).
        ``user_id``: the platform's id of the customer who opened it; the platform authenticated
        them, so it is recorded as verified (``channel:user_id``)."""
        verified = f"{channel}:{user_id}" if user_id else None
        return self._store.conversation_for(channel, external_id, verified_user_id=verified)

    def conversation(self, conversation_id: str) -> Conversation | None:
        return self._store.get_conversation(conversation_id)

    def find_conversation(self, channel: str, external_id: str) -> Conversation | None:
        return self._store.find_conversation(channel, external_id)

    def token_matches(self, conv: Conversation, token: str) -> bool:
        return self._store.token_matches(conv, token)

    def find_message(self, channel: str, external_id: str) -> Message | None:
        """An inbox message by its delivery key (has this delivery been seen?)."""
        return self._store.find_message(channel, external_id)

    def messages(self, conversation_id: str) -> list[Message]:
        return self._store.messages(conversation_id)

    def turns(self, conversation_id: str) -> list[Turn]:
        return self._store.turns(conversation_id)

    def find_escalation(self, thread: str) -> Escalation | None:
        """The escalation a help-desk thread belongs to."""
        return self._store.find_escalation(thread)

    def ping(self) -> None:
        """Raise when the database cannot be reached (the health check)."""
        self._store.ping()

    # -- outcomes and labels, for the staff API --------------------------------------------------

    async def record_outcome(self, data: dict[str, Any]) -> tuple[Outcome, bool]:
        """An outcome from a request body (a CRM or billing webhook): checked, then stored with
        links to the conversation's turns; (the row, whether its external id was seen before).
        Raises OutcomeError for bad input and NotFound for an unknown conversation."""
        fields = labels.parse_outcome(data)
        return await self._db.call(labels.record_outcome, self._store, fields, "api")

    async def label_turn(self, turn_id: int, data: dict[str, Any]) -> tuple[TurnLabel, Turn]:
        """Staff confirming or correcting a turn's intent (``{"intent", "staff"?}``)."""
        return await self._db.call(labels.label_turn, self._store, self.pack, turn_id, data)

    # -- flows, for the staff API --------------------------------------------------------------

    def flow_runs(self, conversation_id: str | None = None) -> list[FlowRun]:
        return self._store.flow_runs(conversation_id)

    def flow_run(self, run_id: str) -> FlowRun | None:
        return self._store.get_flow_run(run_id)

    def checkpoints(self, run_id: str) -> list[FlowCheckpoint]:
        return self._store.checkpoints(run_id)

    def rewind_flow_run(self, rewind: Callable[..., Any], run_id: str, at_checkpoint: int) -> Any:
        """``rewind(store, run_id, None, at_checkpoint)`` (``bot.flows.service.rewind``): what
        a completed step saw and produced. Changes nothing."""
        return rewind(self._store, run_id, None, at_checkpoint)

    def fork_flow_run(self, fork: Callable[..., Any], run_id: str, **kw: Any) -> Any:
        """Run ``fork(store, pack, run_id, **kw)`` (``bot.flows.service.fork``): the one write
        the staff API makes to flow runs."""
        return fork(self._store, self.pack, run_id, **kw)
