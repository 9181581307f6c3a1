"""One process per SQLite file: ``gatebot run`` holds an exclusive lock on a file beside the
database until it exits (the kernel releases it however the process ends).

SQLite takes one writer at a time, and the turn locks of a SQLite deployment live in its process
(:mod:`bot.store.turnlock`): a second process would run turns of the same conversation at once.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import IO

from bot.errors import ConfigError

_held: list[IO[str]] = []  # kept open for the life of the process


def sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL; None for PostgreSQL or an in-memory database."""
    if not url.startswith("sqlite:///") or url.startswith("sqlite:///:memory:"):
        return None
    return Path(url.removeprefix("sqlite:///").split("?", 1)[0])


def hold_sqlite_file(url: str) -> Path | None:
    """Lock ``DATABASE.lock`` for this process, or raise :class:`ConfigError` when another
    process holds it. Returns the lock file's path (None: nothing to lock)."""
    path = sqlite_path(url)
    if path is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_name(path.name + ".lock")
    handle = open(lock_path, "a+")  # noqa: SIM115 - held open until the process exits
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise ConfigError(
            f"another gatebot process is already serving {path} (it holds {lock_path}): SQLite "
            "takes one process. Stop that one, or set DATABASE_URL to PostgreSQL to run several."
        ) from None
    _held.append(handle)
    return lock_path
