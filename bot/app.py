"""The app: settings, plugins, pack, store and agent wired together; starts and stops channels."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from bot.admission import TurnAdmission
from bot.channelretry import ChannelRetries
from bot.config import Settings
from bot.data import DataAccess
from bot.errors import ChannelUnavailable, ConfigError, GatebotError
from bot.eventfanout import event_bus
from bot.extend.channel import ChannelAdapter
from bot.extend.datasource import DataSource
from bot.extend.email import EmailTransport, NoEmail
from bot.extend.host import ChannelHost, Handler, Route
from bot.extend.provider import ModelProvider
from bot.extend.recorder import ConsoleRecorder, JsonlRecorder, MemoryRecorder, Recorder
from bot.extend.retriever import LexicalRetriever, Retriever
from bot.extend.tool import Tool, ToolRegistry, ToolRunner
from bot.helpdesk import HelpDesks, desk_channels
from bot.metrics import Metrics
from bot.packs.checked import load_checked_pack
from bot.plugins import PluginManager, call_lifecycle, load_plugins
from bot.redisconn import redis_client
from bot.retention import erase_expired
from bot.startup import timed
from bot.store import Store
from bot.store.runner import StoreRunner
from bot.store.turnlock import turn_locks
from bot.turn.agent import Agent

log = logging.getLogger(__name__)

#: The longest a channel adapter's stop or the live events' stop may take before the app goes on
#: without it: an SDK loop that ignores its cancellation must not keep the process from stopping.
PART_STOP_S = 20.0


class Registry:
    """What the ``register_*`` hooks handed over, collected once at build time."""

    def __init__(self, plugins: PluginManager) -> None:
        self.channels: list[Callable[[ChannelHost], ChannelAdapter]] = []
        self.providers: dict[str, Callable[[str], ModelProvider]] = {}
        self.tools: list[Tool | Callable[[App], list[Tool]]] = []
        self.retrievers: list[Callable[[App], Retriever]] = []
        self.email: dict[str, Callable[[Settings], EmailTransport]] = {}
        self.recorders: list[Recorder] = []
        self.data_sources: dict[str, Callable[..., DataSource]] = {}
        hook = plugins.hook
        hook.register_channels(register=self.channels.append)
        hook.register_model_providers(register=self._provider)
        hook.register_tools(register=self._tool)
        hook.register_retrievers(register=self.retrievers.append)
        hook.register_email_transports(register=self._email)
        hook.register_recorders(register=self.recorders.append)
        hook.register_data_sources(register=self.data_sources.__setitem__)

    def routes(self, plugins: PluginManager, host: ChannelHost) -> list[Route]:
        """The HTTP routes plugins give (``register_routes``); the web channel serves them."""
        routes: list[Route] = []

        def register(method: str, path: str, handler: Handler) -> None:
            routes.append((method.upper(), path, handler))

        plugins.hook.register_routes(register=register, host=host)
        return routes

    def _provider(self, name: str, factory: Callable[[str], ModelProvider]) -> None:
        self.providers[name] = factory

    def _tool(self, tool: Tool | Callable[[App], list[Tool]]) -> None:
        if isinstance(tool, Tool) and not tool.name:
            raise ConfigError(f"tool {tool!r} has no name")
        self.tools.append(tool)

    def _email(self, name: str, factory: Callable[[Settings], EmailTransport]) -> None:
        self.email[name] = factory


class App:
    def __init__(
        self,
        settings: Settings,
        *,
        extra_plugins: list[object] | None = None,
        recorders: list[Recorder] | None = None,
    ) -> None:
        self.settings = settings
        with timed("plugins"):
            self.plugins = load_plugins(extra_plugins)
            self.registry = Registry(self.plugins)
        with timed("pack"):
            self.pack = load_checked_pack(settings.pack, self.plugins)
        self.store, self.metrics = Store(settings.database_url), Metrics()
        # The store's calls on a turn's and the web API's path: off the loop, within a deadline.
        self.db = StoreRunner(self.store, deadline=settings.database_timeout)
        # Turns of one conversation one at a time across every process on this database.
        self.turn_locks = turn_locks(self.store, redis_client(settings))
        self.admission = TurnAdmission(settings.max_turns, self.metrics)
        self.events = event_bus(settings, self.metrics)  # across processes with REDIS_URL
        self.provider = self._choose_provider(settings.model)
        self.retriever = (
            self.registry.retrievers[-1](self)
            if self.registry.retrievers
            else LexicalRetriever(self.pack)
        )
        email = self.registry.email.get(settings.email or "")
        self.email = email(settings) if email else NoEmail()
        # Governed data (data.yaml): its sources, and a read-only tool per table (bot.data).
        self.data = DataAccess.build(self.pack.data, self.registry.data_sources)
        self.tools = self._build_tools()
        self.recorders = [*self._builtin_recorders(), *self.registry.recorders, *(recorders or [])]
        self.helpdesks = HelpDesks(
            self.store,
            self.pack,
            self.email,
            self.metrics,
            self.events,
            desk_channels(self.channel),
            self.channel,
            db=self.db,
        )
        with timed("agent (heads)"):
            self.agent = self._build_agent()
        self.agent.actor.data = self.data
        # Flows name tools; only now are they known. A flow naming a missing one is disabled.
        self.agent.flows.db = self.db  # the flows' writes share the turn's database threads
        self.agent.flows.bind_tools(self.tools, self.tool_runner)
        self.agent.flows.bind_models(self._choose_provider)
        self.agent.flows.email, self.agent.flows.email_codes = self.email, settings.email_codes
        for name, why in self.agent.flows.disabled.items():
            log.warning("flow %s is disabled: %s", name, why)
        self.channels: list[ChannelAdapter] = []
        self.retries = ChannelRetries()
        self._sweeper: asyncio.Task[None] | None = None
        self._retention: asyncio.Task[None] | None = None
        self.host = self._build_host()
        self._describe_metrics()

    def _build_agent(self) -> Agent:
        return Agent(
            self.pack,
            self.store,
            self.provider,
            self.retriever,
            self.recorders,
            self.events,
            self.metrics,
            escalate=self.helpdesks.open,
            relay=self.helpdesks.relay,
            preflight=self.settings.preflight,
            db=self.db,
            locks=self.turn_locks,
        )

    def _build_host(self) -> ChannelHost:
        """What channel adapters and the web server get instead of the app, with the routes
        plugins registered for the web channel to serve."""
        host = ChannelHost(
            settings=self.settings,
            pack=self.pack,
            store=self.store,
            db=self.db,
            admission=self.admission,
            agent=self.agent,
            act=self.helpdesks.act,
            events=self.events,
            metrics=self.metrics,
            channel=self.channel,
            info=self.info,
            disabled_flows=lambda: self.agent.flows.disabled,
        )
        host.routes.extend(self.registry.routes(self.plugins, host))
        return host

    def _choose_provider(self, spec: str) -> ModelProvider:
        name, _, model = spec.partition(":")
        factory = self.registry.providers.get(name)
        if factory is None:
            known = ", ".join(sorted(self.registry.providers)) or "none"
            raise ConfigError(
                f"GATEBOT_MODEL={spec!r} names no registered provider (registered: {known})"
            )
        return factory(model)

    def _build_tools(self) -> ToolRegistry:
        """Every registered tool, plus those factories build from the pack (the API catalog's
        endpoints). A tool without a schema is refused here, at build time."""
        registry = ToolRegistry()
        for entry in self.registry.tools:
            for tool in entry(self) if not isinstance(entry, Tool) else [entry]:
                try:
                    registry.add(tool)
                except GatebotError as exc:
                    raise ConfigError(str(exc)) from exc
        for tool in self.data.tools() if self.data else []:
            registry.add(tool)  # data.TABLE: a flow or a model may read a declared table too
        return registry

    def tool_runner(self, conversation_id: str | None = None) -> ToolRunner:
        """The lifecycle wrapper over this app's tools; events go live to ``conversation_id``."""
        if conversation_id is None:
            return ToolRunner(self.tools)
        return ToolRunner(self.tools, lambda e: self.events.publish(conversation_id, e))

    def _builtin_recorders(self) -> list[Recorder]:
        out: list[Recorder] = []
        for name in self.settings.recorders:
            if name == "jsonl":
                out.append(JsonlRecorder(self.settings.jsonl_path))
            elif name == "console":
                out.append(ConsoleRecorder())
            elif name == "memory":
                out.append(MemoryRecorder())
            elif name not in ("", "none"):
                raise ConfigError(
                    f"GATEBOT_RECORDERS names unknown recorder {name!r} "
                    "(built in: console, jsonl, memory; plugins add more)"
                )
        return out

    def _describe_metrics(self) -> None:
        m = self.metrics
        m.describe("gatebot_turns_total", "counter", "Turns completed, by move and channel.")
        m.describe("gatebot_turn_seconds", "histogram", "Time of one turn, inbox to record.")
        m.describe(
            "gatebot_duplicate_messages_total",
            "counter",
            "Repeated deliveries answered from the stored turn.",
        )
        m.describe("gatebot_escalations_total", "counter", "Escalations queued, by reason.")

    async def start(self, channels: bool = True) -> None:
        """Migrate, run plugins' startup, start channels, then finish and deliver the turns a
        crash interrupted. If anything fails, what already started is stopped again."""
        try:
            await self._start(channels)
        except BaseException:
            await self.stop()
            raise
        recovered = await self.agent.recover()
        for conv, result in recovered:
            adapter = self.channel(conv.channel)
            if adapter is not None and result.replies:
                await adapter.send(conv.id, result.replies)
        if recovered:
            log.warning("finished %d turn(s) interrupted by an earlier stop", len(recovered))

    async def _start(self, channels: bool) -> None:
        # Off the loop: a slow database must not stall what the loop already serves.
        with timed("database"):
            await asyncio.to_thread(self.store.migrate)
        await self.events.start()
        with timed("plugins' startup (knowledge index)"):
            await call_lifecycle(self.plugins.hook.startup(app=self))
        # The scope check's pack vectors and threshold, fitted in the background (the first turn
        # waits for it): after the knowledge index, which the start waits for, so the two do not
        # share the cores while the start waits.
        self.agent.scope_check.warm()
        if any(desk.email for desk in self.pack.helpdesks):
            self._sweeper = asyncio.create_task(self._sweep_forever(), name="helpdesk-sweep")
        if self.settings.retention_days is not None:
            self._retention = asyncio.create_task(self._retain_forever(), name="retention")
        if channels:
            wanted = self.settings.channels
            for factory in self.registry.channels:
                adapter = factory(self.host)
                chosen = adapter.name in wanted if wanted is not None else adapter.configured
                if chosen:
                    self.channels.append(adapter)
            for adapter in list(self.channels):
                try:
                    with timed(f"channel {adapter.name}"):
                        await adapter.start()
                except ChannelUnavailable as exc:
                    # Out of reach for now: the others serve while it is retried.
                    self.channels.remove(adapter)
                    self.retries.retry(adapter, exc, self.channels.append)
                except BaseException:
                    self.channels.remove(adapter)  # never started: nothing to stop
                    raise

    async def _sweep_forever(self, every: float = 30.0) -> None:
        """Email unclaimed escalations, every ``every`` seconds, until the app stops."""
        while True:
            await asyncio.sleep(every)
            try:
                await self.helpdesks.sweep()
            except Exception:  # one bad sweep must not end the next ones
                log.exception("help-desk sweep failed")

    async def _retain_forever(self, every: float = 3600.0) -> None:
        """Erase conversations past the retention period now, then every ``every`` seconds."""
        days = self.settings.retention_days
        assert days is not None
        while True:
            try:
                ids = await asyncio.to_thread(
                    erase_expired, self.store, self.settings.jsonl_path, days
                )
                if ids:
                    log.info("retention: erased %d conversation(s)", len(ids))
            except Exception:  # one failed pass must not end the next ones
                log.exception("retention pass failed")
            await asyncio.sleep(every)

    async def stop(self) -> None:
        for task in (self._sweeper, self._retention):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._sweeper = self._retention = None
        await self.retries.stop()
        for adapter in reversed(self.channels):
            try:
                await _bounded(f"channel {adapter.name}", adapter.stop())
            except Exception:
                log.exception("channel %s did not stop cleanly", adapter.name)
        self.channels.clear()
        await _bounded("live events", self.events.stop())
        await call_lifecycle(self.plugins.hook.shutdown(app=self))
        await self.provider.aclose()
        await self.agent.flows.aclose()
        await self.turn_locks.aclose()
        if self.data is not None:
            await self.data.close()
        self.db.close()
        self.store.close()

    def channel(self, name: str) -> ChannelAdapter | None:
        return next((c for c in self.channels if c.name == name), None)

    def info(self) -> dict[str, Any]:
        return {
            "pack": self.pack.name,
            "pack_version": self.pack.version,
            "provider": f"{self.provider.name}:{self.provider.model}".rstrip(":"),
            "retriever": self.retriever.name,
            "channels": {
                **{c.name: {"status": "up"} for c in self.channels},
                **self.retries.report(),
            },
        }


async def _bounded(part: str, stopping: Any, seconds: float = PART_STOP_S) -> None:
    """Await ``stopping`` (one part's stop) for at most ``seconds``, then go on without it. Not
    ``asyncio.wait_for``: on a timeout it waits for the cancelled work to end, which is what a
    loop that swallowed its cancellation never does (redis-py's pub/sub read under Python 3.11's
    ``asyncio.timeout`` can turn a cancel into a timeout and read on)."""
    task = asyncio.ensure_future(stopping)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if not done:
        task.cancel()
        log.warning("%s did not stop within %g s; the app stops without it", part, seconds)
        return
    task.result()  # what the stop raised, raised here
