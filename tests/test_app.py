"""Starting and stopping the app: channel selection, failure clean-up, recovery delivery."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bot.app import App
from bot.config import Settings
from bot.errors import ConfigError
from bot.extend.channel import ChannelAdapter
from bot.extend.host import ChannelHost
from bot.hookspecs import hookimpl

EVENTS: list[str] = []


class Good(ChannelAdapter):
    name = "good"

    async def start(self) -> None:
        EVENTS.append("good started")

    async def stop(self) -> None:
        EVENTS.append("good stopped")

    async def send(self, conversation_id: str, replies: list[dict[str, Any]]) -> None:
        EVENTS.append(f"sent {replies[0]['text'][:5]}")


class Broken(Good):
    name = "broken"

    async def start(self) -> None:
        raise ConfigError("BROKEN_TOKEN is not set")


class Unconfigured(Good):
    name = "unconfigured"

    @property
    def configured(self) -> bool:
        return False


class WrittenForTheApp(Good):
    """An adapter written as ``factory(app)`` that uses only what the host also offers."""

    name = "old"

    def __init__(self, app: Any) -> None:
        super().__init__(app)
        self.given = app

    async def start(self) -> None:
        conv = self.app.conversation_for(self.name, "thread-1")
        result = await self.app.handle(conv, "hello", "m1")
        self.app.events.publish(conv.id, {"type": "replies", "replies": result.replies})
        EVENTS.append(f"old started on {self.app.pack.name} ({self.app.settings.port})")


class Channels:
    def __init__(self, *adapters: type[ChannelAdapter]) -> None:
        self.adapters = adapters

    @hookimpl
    def register_channels(self, register: Callable[[Any], None]) -> None:
        for adapter in self.adapters:
            register(adapter)


@pytest.fixture(autouse=True)
def fresh_events(monkeypatch: pytest.MonkeyPatch) -> None:
    EVENTS.clear()
    monkeypatch.setenv("GATEBOT_PLUGINS", "offline")


async def test_unconfigured_channels_stay_off_unless_named(settings: Settings) -> None:
    app = App(settings, extra_plugins=[Channels(Good, Unconfigured)])
    await app.start()
    assert [c.name for c in app.channels] == ["good"]
    await app.stop()
    settings.channels = ["unconfigured"]
    named = App(settings, extra_plugins=[Channels(Good, Unconfigured)])
    await named.start()
    assert [c.name for c in named.channels] == ["unconfigured"]
    await named.stop()


async def test_a_failing_channel_stops_what_already_started(settings: Settings) -> None:
    app = App(settings, extra_plugins=[Channels(Good, Broken)])
    with pytest.raises(ConfigError, match="BROKEN_TOKEN"):
        await app.start()
    assert EVENTS == ["good started", "good stopped"]
    assert app.channels == []


async def test_recovered_turns_are_delivered_on_their_channel(settings: Settings) -> None:
    first = App(settings, extra_plugins=[Channels(Good)])
    await first.start(channels=False)
    conv, _ = first.store.create_conversation("good")
    first.store.receive(conv.id, "good", "lost", "hello")  # stored, then the process died
    await first.stop()
    again = App(settings, extra_plugins=[Channels(Good)])
    await again.start()
    await again.stop()
    assert EVENTS == ["good started", "sent Hi! I", "good stopped"]


async def test_stop_closes_the_model_provider(settings: Settings) -> None:
    app = App(settings)
    closed: list[bool] = []

    async def aclose() -> None:
        closed.append(True)

    app.provider.aclose = aclose  # type: ignore[method-assign]
    await app.start(channels=False)
    await app.stop()
    assert closed == [True]


async def test_adapters_get_the_channel_host_never_the_app(settings: Settings) -> None:
    settings.channels = ["old"]
    app = App(settings, extra_plugins=[Channels(WrittenForTheApp)])
    await app.start()
    try:
        adapter = app.channel("old")
        assert isinstance(adapter, WrittenForTheApp) and isinstance(adapter.given, ChannelHost)
        assert adapter.host is adapter.given and adapter.app is adapter.given
        assert not hasattr(adapter.given, "store") and not hasattr(adapter.given, "agent")
        assert [f"old started on {app.pack.name} ({settings.port})"] == EVENTS
        conv = app.store.find_conversation("old", "thread-1")
        assert conv is not None and len(app.store.turns(conv.id)) == 1
    finally:
        await app.stop()
