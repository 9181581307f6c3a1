"""The inspector's staff sessions in the shared database (table ``staff_sessions``, m012).

The cookie carries a random id; the table keeps its SHA-256, the staff name, the CSRF token and
the expiry, and a mark of the admin token it was opened under. Every process reads the same rows,
so a session opened on one is honoured on all, deleting the row (logout) ends it everywhere, and
changing the admin token ends them all. Expired rows are swept when one opens.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import col

from bot.store.models import StaffSession

#: Live sessions kept at most; past it the ones expiring first go.
MAX_SESSIONS = 1000


def session_hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


def token_mark(session_id: str, token: str) -> str:
    """The admin token as this session knew it, keyed by the cookie's id (never stored)."""
    return hmac.new(session_id.encode(), token.encode(), hashlib.sha256).hexdigest()


def open_staff_session(
    store: Any, staff: str, lifetime_s: float, token: str
) -> tuple[str, StaffSession]:
    """A new session for ``staff``, logged in with ``token``: its cookie value (shown once,
    never stored) and its row."""
    now = datetime.now(UTC)
    session_id = secrets.token_urlsafe(32)
    row = StaffSession(
        id_hash=session_hash(session_id),
        staff=staff[:80],
        csrf=secrets.token_urlsafe(24),
        token_mark=token_mark(session_id, token),
        expires_at=now + timedelta(seconds=lifetime_s),
        created_at=now,
    )
    table = StaffSession.__table__  # type: ignore[attr-defined]
    with store.engine.begin() as db:
        db.execute(sa.delete(table).where(table.c.expires_at <= now))
        live = db.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
        if live >= MAX_SESSIONS:
            oldest = sa.select(table.c.id_hash).order_by(table.c.expires_at)
            doomed = [r[0] for r in db.execute(oldest.limit(live - MAX_SESSIONS + 1))]
            db.execute(sa.delete(table).where(table.c.id_hash.in_(doomed)))
        db.execute(sa.insert(table).values(**row.model_dump()))
    return session_id, row


def find_staff_session(store: Any, session_id: str, token: str) -> StaffSession | None:
    """The live session this cookie value stands for, or None (unknown, expired, logged out,
    or opened under another admin token than ``token``)."""
    with store.session() as s:
        found = s.get(StaffSession, session_hash(session_id))
    if found is None or not hmac.compare_digest(found.token_mark, token_mark(session_id, token)):
        return None
    expires = found.expires_at
    if expires.tzinfo is None:  # SQLite hands times back without their zone; they are UTC
        expires = expires.replace(tzinfo=UTC)
    return found if expires > datetime.now(UTC) else None


def close_staff_session(store: Any, session_id: str) -> None:
    with store.engine.begin() as db:
        db.execute(
            sa.delete(StaffSession.__table__).where(  # type: ignore[attr-defined]
                col(StaffSession.id_hash) == session_hash(session_id)
            )
        )


def count_staff_sessions(store: Any) -> int:
    table = StaffSession.__table__  # type: ignore[attr-defined]
    with store.engine.connect() as db:
        return int(db.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())
