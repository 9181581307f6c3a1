"""The one validation path for a pack: the core's checks (:func:`bot.packs.load_pack`), then
every plugin's (the ``check_pack`` hook, e.g. the API catalog's). ``gatebot check`` and the app's
start both load a pack through it, so one cannot accept what the other refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.errors import PackError, PackErrors
from bot.packs import load_pack
from bot.packs.model import Pack


def load_checked_pack(path: str | Path, plugins: Any) -> Pack:
    """The pack at ``path``, checked by the core and by every plugin in ``plugins`` (a
    :class:`bot.plugins.PluginManager`); :class:`PackErrors` lists every problem found."""
    pack = load_pack(path)
    errors: list[PackError] = [
        error for found in plugins.hook.check_pack(pack=pack) for error in found or []
    ]
    if errors:
        raise PackErrors(errors)
    return pack
