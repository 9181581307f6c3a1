"""The plugin manager: loads every plugin from the ``gatebot`` entry-point group.

First-party plugins (web widget, offline provider, ...) are registered by the same call as
anyone's. A plugin that fails to import is named in a :class:`PluginLoadError` and skipped, so
one broken package never takes the others down.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Awaitable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from bot import hookspecs
from bot.errors import PluginLoadError

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "gatebot"


@dataclass
class PluginManager:
    """pluggy's manager plus the load errors, for ``gatebot plugins`` and ``doctor`` to show."""

    pm: pluggy.PluginManager
    errors: list[PluginLoadError] = field(default_factory=list)

    @property
    def hook(self) -> Any:
        return self.pm.hook

    def register(self, plugin: object, name: str | None = None) -> None:
        """Register a plugin object (a module or an instance) directly, as tests do."""
        self.pm.register(plugin, name=name)
        self.pm.check_pending()

    def describe(self) -> list[dict[str, Any]]:
        """Each plugin with its distribution and the hooks it implements, sorted by name."""
        rows: list[dict[str, Any]] = []
        dists = {name: dist for dist, name in self._dist_names()}
        for name, plugin in self.pm.list_name_plugin():
            if plugin is None:
                continue
            hooks = sorted(h.name for h in self.pm.get_hookcallers(plugin) or [])
            rows.append({"name": name, "distribution": dists.get(name), "hooks": hooks})
        rows.sort(key=lambda r: r["name"])
        return rows

    def _dist_names(self) -> list[tuple[str, str]]:
        return [
            (f"{dist.project_name}=={dist.version}", self.pm.get_name(plugin) or "")
            for plugin, dist in self.pm.list_plugin_distinfo()
        ]


def _allowed(name: str) -> bool:
    """GATEBOT_PLUGINS narrows what loads (comma-separated names); unset loads everything."""
    allow = os.environ.get("GATEBOT_PLUGINS", "").strip()
    if not allow:
        return True
    return name in {n.strip() for n in allow.split(",") if n.strip()}


class _DistInfo:
    """What pluggy's list_plugin_distinfo expects: a distribution with project_name and version."""

    def __init__(self, dist: metadata.Distribution) -> None:
        self._dist = dist
        self.project_name = dist.metadata["name"]
        self.version = dist.version

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._dist, attr)


def load_plugins(extra: list[object] | None = None) -> PluginManager:
    """Build a manager with every installed plugin that imports, plus ``extra`` objects."""
    pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
    pm.add_hookspecs(hookspecs)
    manager = PluginManager(pm)
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if not _allowed(ep.name) or pm.get_plugin(ep.name) is not None:
            continue
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
            if ep.dist is not None:
                pm._plugin_distinfo.append((plugin, _DistInfo(ep.dist)))  # type: ignore[arg-type]
        except Exception as exc:  # any import-time failure must not take the others down
            error = PluginLoadError(ep.name, f"{type(exc).__name__}: {exc}")
            log.error("%s", error)
            manager.errors.append(error)
    for obj in extra or []:
        if not pm.is_registered(obj):  # a module that an entry point already loaded
            pm.register(obj)
    while True:
        try:
            pm.check_pending()
            break
        except pluggy.PluginValidationError as exc:
            # A misspelled hook is a broken plugin: name it, drop it, keep the rest.
            name = pm.get_name(exc.plugin) or repr(exc.plugin)
            pm.unregister(exc.plugin)
            manager.errors.append(PluginLoadError(name, str(exc)))
    return manager


async def call_lifecycle(results: list[Any]) -> None:
    """Await what ``startup``/``shutdown`` implementations returned (value, awaitable or None)."""
    for result in results:
        if inspect.isawaitable(result):
            await _await(result)


async def _await(result: Awaitable[Any]) -> None:
    await result
