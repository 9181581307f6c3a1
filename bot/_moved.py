"""Old module paths that plugins imported before the core was grouped into ``bot.turn`` and
``bot.extend`` (``from bot.channels import ChannelAdapter`` and the like) keep importing.

Each old name is a module of its own whose namespace is the new module's, so the classes are the
same objects (``isinstance`` and subclassing work) while the new module keeps its own identity.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

#: old dotted name -> where it lives now.
MOVED = {
    "bot.channels": "bot.extend.channel",
    "bot.email": "bot.extend.email",
    "bot.knowledge": "bot.extend.retriever",
    "bot.providers": "bot.extend.provider",
    "bot.recorders": "bot.extend.recorder",
    "bot.tools": "bot.extend.tool",
    "bot.acting": "bot.turn.act",
    "bot.agent": "bot.turn.agent",
    "bot.playbook": "bot.turn.decide",
    "bot.replygate": "bot.turn.replygate",
}


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default: a fresh module, filled below

    def exec_module(self, module: ModuleType) -> None:
        real = importlib.import_module(MOVED[module.__name__])
        module.__dict__.update(
            {k: v for k, v in vars(real).items() if not (k.startswith("__") and k.endswith("__"))}
        )
        module.__doc__ = f"Moved to :mod:`{real.__name__}`; kept so older imports still work."


def install() -> None:
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
