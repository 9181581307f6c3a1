"""A tripwire for store calls made on the event loop, for tests (and ``GATEBOT_STORE_GUARD=1``).

Every database call a running server makes belongs on a :class:`bot.store.runner.StoreRunner`
thread: a Store method called on a thread running an asyncio loop blocks every request for the
length of a commit, or for ever when the database stops answering. :func:`install` wraps the
Store's methods so that such a call is reported with the line that made it. Calls made by test
code itself (setting up or checking rows) are exempt: they are not part of the server.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

#: Methods that touch no database, or that must run where they are (shutdown, interrupting).
EXEMPT = frozenset({"interrupt", "close", "token_matches"})
_STORE_DIR = str(Path(__file__).resolve().parent)
_TESTS_DIR = str(Path(__file__).resolve().parents[2] / "tests")
_depth = threading.local()
_ASYNC = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class StoreOnLoop(RuntimeError):
    """A Store method was called on the event loop's thread."""


def _on_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _caller() -> str | None:
    """Where the call came from (the first frame outside bot/store), or None when test code
    made it synchronously: a test's own setup or check, or a synchronous path (the CLI) a test
    runs, reached without passing through any coroutine of the server's."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_STORE_DIR):
        frame = frame.f_back
    if frame is None:
        return "?"
    where = f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"
    while frame is not None:
        if frame.f_code.co_filename.startswith(_TESTS_DIR):
            return None
        if frame.f_code.co_flags & _ASYNC:
            return where  # server code running on the loop
        frame = frame.f_back
    return where


def _wrap(name: str, fn: Callable[..., Any], report: Callable[[str], None]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        depth = getattr(_depth, "n", 0)
        if depth == 0 and _on_loop():
            where = _caller()
            if where is not None:
                report(f"Store.{name} called on the event loop from {where}")
        _depth.n = depth + 1
        try:
            return fn(*args, **kwargs)
        finally:
            _depth.n = depth

    guarded.__wrapped_by_guard__ = fn  # type: ignore[attr-defined]
    return guarded


def install(report: Callable[[str], None] | None = None) -> Callable[[], None]:
    """Wrap the Store's database methods; ``report`` gets each violation (default: raise
    :class:`StoreOnLoop`). Returns the function that takes the wrappers off again."""
    from bot.store import Store

    def raise_(message: str) -> None:
        raise StoreOnLoop(message)

    originals: dict[str, Any] = {}
    for klass in reversed(Store.__mro__[:-1]):
        for name, value in vars(klass).items():
            if name.startswith("_") or name in EXEMPT or not callable(value):
                continue
            if isinstance(value, staticmethod | classmethod):
                continue
            originals[name] = getattr(Store, name)
    for name, fn in originals.items():
        setattr(Store, name, _wrap(name, fn, report or raise_))

    def uninstall() -> None:
        for name, fn in originals.items():
            setattr(Store, name, fn)

    return uninstall


def install_from_env() -> None:
    """``GATEBOT_STORE_GUARD=1``: every Store call on the event loop raises."""
    if os.environ.get("GATEBOT_STORE_GUARD", "") == "1":
        install()
