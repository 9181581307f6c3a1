"""The API catalog plugin: a pack's ``apis.yaml`` becomes tools, one per endpoint, plus
``catalog.inspect``, ``catalog.call`` and ``catalog.read_result`` for a model.

``spec`` reads and checks the file, ``urls`` builds and validates each request before anything
leaves the process, ``client`` sends it (aiohttp) with the credential read from the environment,
``tools`` wraps endpoints as :class:`bot.extend.tool.Tool`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import click

from bot.errors import ConfigError, PackError, PackErrors
from bot.extend.tool import Tool
from bot.hookspecs import hookimpl
from gatebot_catalog.cli import command as catalog_command
from gatebot_catalog.client import CatalogClient
from gatebot_catalog.spec import Catalog, load_catalog
from gatebot_catalog.tools import build_tools

#: One HTTP client per app, closed at shutdown.
_clients: weakref.WeakKeyDictionary[Any, CatalogClient] = weakref.WeakKeyDictionary()


def catalog_tools(app: Any) -> list[Tool]:
    """The tools of the pack's catalog (none when the pack has no ``apis.yaml``)."""
    catalog = load_catalog(app.pack.root)
    if catalog is None:
        return []
    problems = slot_errors(catalog, app.pack)
    if problems:
        raise ConfigError(str(problems[0]))
    for name, api in catalog.apis.items():
        if api.demo:
            catalog.apis[name] = replace(api, base_url=own_address(app, api.base_url))
    client = _clients.setdefault(app, CatalogClient())
    return build_tools(catalog, client)


def slot_errors(catalog: Catalog, pack: Any) -> list[PackError]:
    """A parameter tied to a conversation value (``value: email``) must name a playbook slot
    (``identity.user_id`` is the verified identity, not a slot)."""
    slots = {slot.name for slot in pack.slots}
    return [
        PackError(
            f"{pack.root.name}/apis.yaml",
            None,
            f"{name}.{endpoint.id}.{param.name}",
            f"value {param.value!r} is not a slot of the playbook",
        )
        for name, api in catalog.apis.items()
        for endpoint in api.endpoints.values()
        for param in endpoint.params.values()
        if param.value is not None and not param.from_identity and param.value not in slots
    ]


@hookimpl
def check_pack(pack: Any) -> list[PackError]:
    """The catalog's checks for ``gatebot check`` and the app's start alike."""
    try:
        catalog = load_catalog(pack.root)
    except PackErrors as exc:
        return list(exc.errors)
    return slot_errors(catalog, pack) if catalog is not None else []


def own_address(app: Any, declared: str) -> str:
    """The demo API is served by this app's own web server, so its base URL is this app's address
    (on whatever port it runs) with the declared path; ``base_url_env`` still overrides it."""
    host = app.settings.host if app.settings.host not in ("", "0.0.0.0", "::") else "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{app.settings.port}{urlsplit(declared).path}".rstrip("/")


@hookimpl
def register_tools(register: Callable[[Any], None]) -> None:
    register(catalog_tools)


@hookimpl
def register_commands(cli: click.Group) -> None:
    cli.add_command(catalog_command)


@hookimpl
async def shutdown(app: Any) -> None:
    client = _clients.pop(app, None)
    if client is not None:
        await client.close()
