"""Every hook a gatebot plugin can implement.

Contribution hooks take a ``register`` callback: a plugin calls it once per thing it gives, so the
plugin side stays two lines. Hooks are synchronous and do no I/O; what they hand back has
``async def`` methods that the host awaits. Call hooks with keyword arguments only, so a plugin may
accept fewer arguments than the spec names and new arguments never break old plugins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import click

hookspec = pluggy.HookspecMarker("gatebot")
hookimpl = pluggy.HookimplMarker("gatebot")


@hookspec
def register_channels(register: Callable[[Any], None]) -> None:
    """Give channel adapters (web widget, Slack, Discord).

    Fires once when the app is built. Call ``register(factory)`` for each adapter, where
    ``factory(host)`` returns a :class:`bot.extend.channel.ChannelAdapter` and ``host`` is the
    :class:`bot.extend.host.ChannelHost`: the operations an adapter may use (hand a message to
    the agent, find a conversation, act for staff, live events, metrics, settings, the pack),
    never the app itself. The adapter receives customer messages, hands them to
    ``host.handle`` and renders replies and cards in its platform's idiom. Returns nothing.
    """


@hookspec
def register_routes(register: Callable[[str, str, Any], None], host: Any) -> None:
    """Give HTTP endpoints that the web channel serves beside its own (Slack's ``/slack/events``,
    the demo orders API).

    Fires once when the app is built, before any channel starts. Call
    ``register(method, path, handler)`` per route, where ``handler`` is an aiohttp handler
    (``async (request) -> response``). ``host`` is the :class:`bot.extend.host.ChannelHost`, for
    a handler that needs a running adapter (``host.channel(name)``) or the pack; take it only if
    needed. A route is served only while the web channel runs. Returns nothing.
    """


@hookspec
def register_model_providers(register: Callable[[str, Any], None]) -> None:
    """Give model providers.

    Fires once when the app is built. Call ``register(name, factory)`` where ``factory(model)``
    returns a :class:`bot.extend.provider.ModelProvider`; ``GATEBOT_MODEL=name:model`` selects it
    (``offline`` needs no model part). Returns nothing.
    """


@hookspec
def register_tools(register: Callable[[Any], None]) -> None:
    """Give tools the agent may call.

    Fires once when the app is built. Call ``register(tool)`` with a :class:`bot.extend.tool.Tool`:
    a name, a JSON schema for its arguments, a ``changes`` flag (a tool that changes anything is
    read back and runs only on a confident yes) and an ownership rule; or ``register(factory)``
    where ``factory(app)`` returns a list of tools built from ``app.pack`` (the API catalog gives
    one per declared endpoint). A tool without an argument schema is refused at build time. Every
    call passes :class:`bot.extend.tool.ToolRunner`, never the tool directly. Returns nothing.
    """


@hookspec
def register_retrievers(register: Callable[[Any], None]) -> None:
    """Give knowledge search backends.

    Fires once when the app is built. Call ``register(factory)`` where ``factory(app)`` returns a
    :class:`bot.extend.retriever.Retriever` over ``app.pack`` (``app.store`` is there for
    persistence;
    the schema is migrated before ``startup`` hooks run, so build indexes there, not in the
    factory). The last registered wins over the built-in lexical one. Returns nothing.
    """


@hookspec
def register_email_transports(register: Callable[[str, Any], None]) -> None:
    """Give email transports.

    Fires once when the app is built. Call ``register(name, factory)`` where ``factory(settings)``
    returns a :class:`bot.extend.email.EmailTransport`; ``GATEBOT_EMAIL=name`` selects it. With none
    configured, sending reports an honest failure. Returns nothing.
    """


@hookspec
def register_recorders(register: Callable[[Any], None]) -> None:
    """Give places that turn records go besides the database.

    Fires once when the app is built. Call ``register(recorder)`` with a
    :class:`bot.extend.recorder.Recorder`; it receives every turn record after the turn is stored.
    A recorder that raises is logged and never fails the turn. Returns nothing.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add commands to the ``gatebot`` command line.

    Fires once when the CLI starts. Use ``@cli.command()`` on ``cli``, a :class:`click.Group`.
    Returns nothing.
    """


@hookspec
def check_pack(pack: Any) -> list[Any]:
    """Check the parts of a pack that this plugin reads (the API catalog's ``apis.yaml``, ...).

    Fires once for every pack loaded, by ``gatebot check`` and by the app at start alike
    (:func:`bot.packs.checked.load_checked_pack`), so what the app would refuse, ``check``
    refuses with the same message. ``pack`` is the loaded :class:`bot.packs.Pack`. Returns a list
    of :class:`bot.errors.PackError` (empty when all is well).
    """
    return []


@hookspec
def startup(app: Any) -> Any:
    """Start long-lived clients and connections.

    Fires once after the app is built and the store migrated, before any channel starts. ``app``
    is the :class:`bot.app.App`. Returns ``None`` or an awaitable, which the host awaits before
    going on.
    """


@hookspec
def shutdown(app: Any) -> Any:
    """Close what ``startup`` opened.

    Fires once when the app stops, after channels stopped. Returns ``None`` or an awaitable,
    which the host awaits.
    """


@hookspec
def register_data_sources(register: Callable[[str, Any], None]) -> None:
    """Give data-source kinds for governed data (a pack's ``data.yaml``).

    Fires once when the app is built. Call ``register(kind, factory)`` where
    ``factory(spec, url)`` returns a :class:`bot.extend.datasource.DataSource` for one declared
    source of that kind (``spec``: its :class:`bot.packs.data.DataSourceSpec`; ``url``: the value
    of its ``url_env`` variable). The runtime builds every read from the declaration and applies
    the row and field policy; a source only runs what it is given. Returns nothing.
    """
