"""The database engine: connect and statement timeouts, SQLite's pragmas, and a way to interrupt
the statement a given thread is waiting on (see :mod:`bot.store.runner`)."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from pathlib import Path
from typing import Any

import sqlalchemy as sa

#: Seconds to open a connection (PostgreSQL) or wait for SQLite's write lock, and the most a
#: statement may run on the server; a turn's statements take milliseconds.
CONNECT_TIMEOUT_S = 3
STATEMENT_TIMEOUT_S = 5
#: Connections per process on PostgreSQL (and database threads, one each).
POOL_SIZE = 8
_TIMEOUT_OPTION = f"-c statement_timeout={STATEMENT_TIMEOUT_S * 1000}"


def make_engine(url: str, **engine_args: Any) -> sa.Engine:
    if url.startswith("sqlite:///") and not url.startswith("sqlite:///:memory:"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    if url.startswith("sqlite"):
        engine_args.setdefault(
            "connect_args", {"check_same_thread": False, "timeout": CONNECT_TIMEOUT_S}
        )
    elif url.startswith("postgresql"):
        # connect_args replace the URL's own options (a search_path, say): keep those too.
        options = sa.make_url(url).query.get("options", "")
        options = " ".join([*([options] if isinstance(options, str) else options), _TIMEOUT_OPTION])
        engine_args.setdefault(
            "connect_args", {"connect_timeout": CONNECT_TIMEOUT_S, "options": options.strip()}
        )
        if "poolclass" not in engine_args:  # a NullPool (the turn locks' own) takes neither
            engine_args.setdefault("pool_size", POOL_SIZE)
            engine_args.setdefault("pool_timeout", CONNECT_TIMEOUT_S)
    # An error's message (logged, or shown by a channel) must never carry a customer's words, which
    # travel as statement parameters: SQLAlchemy then prints "[SQL parameters hidden ...]".
    engine_args.setdefault("hide_parameters", True)
    engine = sa.create_engine(url, **engine_args)
    if url.startswith("sqlite"):
        sa.event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # WAL lets readers (the REST API's GET) run beside the writer; foreign keys are off by default.
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


class HeldConnections:
    """Which DBAPI connection each thread has checked out, so another thread can interrupt it."""

    def __init__(self, engine: sa.Engine) -> None:
        self._held: dict[int, Any] = {}
        sa.event.listen(engine, "checkout", self._checkout)
        sa.event.listen(engine, "checkin", self._checkin)

    def _checkout(self, dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        self._held[threading.get_ident()] = dbapi_conn

    def _checkin(self, dbapi_conn: Any, _record: Any) -> None:
        for thread, conn in list(self._held.items()):
            if conn is dbapi_conn:
                self._held.pop(thread, None)

    def interrupt(self, thread: int) -> bool:
        """Stop what ``thread`` waits on: SQLite's statement is interrupted; a PostgreSQL socket
        is shut, which wakes the waiting driver with an error (a cancel request would go to the
        same unanswering server). The pool then drops that connection. False when it held none."""
        conn = self._held.get(thread)
        if conn is None:
            return False
        if hasattr(conn, "interrupt"):  # sqlite3
            conn.interrupt()
            return True
        try:
            fd = int(conn.pgconn.socket)
        except Exception:  # closed already, or not psycopg: nothing to shut
            return False
        with contextlib.suppress(OSError):
            dup = socket.socket(fileno=os.dup(fd))
            try:
                dup.shutdown(socket.SHUT_RDWR)
            finally:
                dup.close()
        return True
