"""Plugin loading through entry points, failure isolation, and every hook exercised once."""

from __future__ import annotations

import inspect
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from click.testing import CliRunner

from bot import hookspecs
from bot.app import App
from bot.config import Settings
from bot.errors import ConfigError, PackError, PackErrors
from bot.extend.datasource import DataSource, Query, Rows
from bot.extend.email import EmailTransport
from bot.extend.recorder import MemoryRecorder, Recorder
from bot.extend.retriever import Fact, Retriever
from bot.extend.tool import Tool
from bot.hookspecs import hookimpl
from bot.plugins import load_plugins
from tests.conftest import ACME

HOOKS = [
    name
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
    if hasattr(fn, "gatebot_spec")
]


def install_fake_distribution(site: Path, name: str, module_source: str) -> None:
    """What `pip install` leaves behind: a module and a dist-info with a `gatebot` entry point."""
    (site / f"{name}.py").write_text(textwrap.dedent(module_source))
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[gatebot]\n{name} = {name}\n")


def test_every_hook_is_documented() -> None:
    assert set(HOOKS) == {
        "register_channels",
        "register_routes",
        "register_model_providers",
        "register_tools",
        "register_retrievers",
        "register_email_transports",
        "register_recorders",
        "register_data_sources",
        "register_commands",
        "check_pack",
        "startup",
        "shutdown",
    }
    for name in HOOKS:
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        assert "Fires" in doc and "Returns" in doc, f"{name} needs a docstring saying when and what"


def test_every_hook_has_a_test() -> None:
    source = Path(__file__).read_text()
    for name in HOOKS:
        assert f"def {name}(" in source, f"no test plugin implements {name}"


def test_first_party_plugins_load_through_entry_points() -> None:
    manager = load_plugins()
    rows = {r["name"]: r for r in manager.describe()}
    assert rows["web"]["hooks"] == ["register_channels"]
    assert rows["offline"]["hooks"] == ["register_model_providers"]
    assert rows["web"]["distribution"].startswith("gatebot==")
    assert manager.errors == []


def test_third_party_plugin_loads_and_a_broken_one_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_fake_distribution(
        tmp_path,
        "gatebot_hello",
        """
        from bot.hookspecs import hookimpl

        @hookimpl
        def register_commands(cli):
            @cli.command("hello")
            def hello():
                print("hello from a plugin")
    """,
    )
    install_fake_distribution(tmp_path, "gatebot_broken", "raise ImportError('needs libfoo')\n")
    install_fake_distribution(
        tmp_path,
        "gatebot_typo",
        """
        from bot.hookspecs import hookimpl

        @hookimpl
        def register_chanels(register):
            pass
    """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    manager = load_plugins()
    names = {r["name"] for r in manager.describe()}
    assert {"gatebot_hello", "web", "offline"} <= names
    assert "gatebot_broken" not in names and "gatebot_typo" not in names
    errors = {e.name: e.reason for e in manager.errors}
    assert "needs libfoo" in errors["gatebot_broken"]
    assert "register_chanels" in errors["gatebot_typo"]
    assert "plugin 'gatebot_broken' failed to load" in str(manager.errors[0])


def test_allow_list_narrows_what_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEBOT_PLUGINS", "offline")
    names = {r["name"] for r in load_plugins().describe()}
    assert "offline" in names and "web" not in names


class EchoTool(Tool):
    name = "echo"
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        return {"note": arguments["text"]}


class FixedRetriever(Retriever):
    name = "fixed"

    def __init__(self, app: App) -> None:
        self.pack = app.pack

    async def search(self, query: str, k: int = 3) -> list[Fact]:
        return [Fact("faq-trial", "A fixed fact.", "faq", "faq")]


class OutboxEmail(EmailTransport):
    name = "outbox"
    sent: list[tuple[str, str, str]] = []

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def send(self, to: str, subject: str, body: str) -> str:
        self.sent.append((to, subject, body))
        return "id-1"


class FakeSource(DataSource):
    kind = "fake"

    async def read(self, query: Query) -> Rows:
        return Rows([], "", [])


class EverythingPlugin:
    """One test plugin implementing every hook, the way a third party would."""

    def __init__(self) -> None:
        self.recorder = MemoryRecorder()
        self.events: list[str] = []

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(EchoTool())

    @hookimpl
    def register_retrievers(self, register: Callable[[Any], None]) -> None:
        register(FixedRetriever)

    @hookimpl
    def register_email_transports(self, register: Callable[[str, Any], None]) -> None:
        register("outbox", OutboxEmail)

    @hookimpl
    def register_recorders(self, register: Callable[[Recorder], None]) -> None:
        register(self.recorder)

    @hookimpl
    def register_data_sources(self, register: Callable[[str, Any], None]) -> None:
        register("fake", FakeSource)

    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        @cli.command("ping")
        def ping() -> None:
            click.echo("pong")

    @hookimpl
    def startup(self, app: App) -> Any:
        async def started() -> None:
            self.events.append("startup")

        return started()

    @hookimpl
    def shutdown(self) -> None:  # takes fewer arguments than the spec: allowed
        self.events.append("shutdown")

    @hookimpl
    def register_channels(self, register: Callable[[Any], None]) -> None:
        pass  # the web channel's own test covers a real adapter

    @hookimpl
    def register_model_providers(self, register: Callable[[str, Any], None]) -> None:
        pass  # tests/test_agent.py registers real providers through this hook

    @hookimpl
    def register_routes(self, register: Callable[[str, str, Any], None], host: Any) -> None:
        async def pack_name(request: web.Request) -> web.Response:
            return web.json_response({"pack": host.pack.name})

        register("get", "/everything/pack", pack_name)


async def test_every_hook_reaches_the_app(settings: Settings) -> None:
    plugin = EverythingPlugin()
    settings.email = "outbox"
    app = App(settings, extra_plugins=[plugin])
    assert app.tools.get("echo") is not None
    assert isinstance(app.retriever, FixedRetriever)
    assert isinstance(app.email, OutboxEmail)
    assert app.registry.data_sources["fake"] is FakeSource
    await app.start(channels=False)
    conv = app.store.create_conversation("web")[0]
    result = await app.agent.handle(conv, "where is my data stored", "1")
    await app.stop()
    assert plugin.events == ["startup", "shutdown"]
    assert plugin.recorder.turns[0]["facts"][0]["key"] == "faq-trial"
    assert "A fixed fact." in result.replies[0]["text"]
    assert await app.email.send("a@b.co", "s", "b") == "id-1"

    group = click.Group("gatebot")
    app.plugins.hook.register_commands(cli=group)
    assert CliRunner().invoke(group, ["ping"]).output == "pong\n"


async def test_registered_routes_are_served_by_the_web_channel(settings: Settings) -> None:
    from gatebot_web.server import build_web_app

    app = App(settings, extra_plugins=[EverythingPlugin()])
    method = next(m for m, path, _ in app.host.routes if path == "/everything/pack")
    assert method == "GET"  # the host upper-cases what a plugin registers
    async with TestClient(TestServer(build_web_app(app.host), host="127.0.0.1")) as client:
        resp = await client.get("/everything/pack")
        assert resp.status == 200 and await resp.json() == {"pack": app.pack.name}
    app.store.close()


async def test_unconfigured_email_fails_honestly(app: App) -> None:
    with pytest.raises(Exception, match="no email transport is configured"):
        await app.email.send("a@b.co", "subject", "body")


def test_unknown_model_provider_is_a_clear_error(settings: Settings) -> None:
    settings.model = "nonesuch:big"
    with pytest.raises(ConfigError, match="names no registered provider"):
        App(settings)


class StrictPlugin:
    """Refuses every pack whose company is not Acme: a plugin's own check of the pack."""

    @hookimpl
    def check_pack(self, pack: Any) -> list[PackError]:
        if pack.company == "Acme Cloud":
            return []
        return [PackError(f"{pack.root.name}/pack.yaml", 4, "company", "must be Acme Cloud")]


def test_check_pack_is_the_one_validation_path_for_check_and_start(
    tmp_path: Path, settings: Settings
) -> None:
    from bot.packs.checked import load_checked_pack

    pack = tmp_path / "acme"
    shutil.copytree(ACME, pack)
    (pack / "pack.yaml").write_text(
        (pack / "pack.yaml").read_text().replace("company: Acme Cloud", "company: Other")
    )
    manager = load_plugins([StrictPlugin()])
    with pytest.raises(PackErrors) as checked:
        load_checked_pack(pack, manager)
    settings.pack = pack
    with pytest.raises(PackErrors) as started:
        App(settings, extra_plugins=[StrictPlugin()])
    assert (
        str(checked.value) == str(started.value) == "acme/pack.yaml:4 [company]: must be Acme Cloud"
    )
    assert load_checked_pack(ACME, manager).company == "Acme Cloud"
