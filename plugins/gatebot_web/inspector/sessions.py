"""The inspector's staff sessions: log in once with GATEBOT_ADMIN_TOKEN, then a cookie.

A session is a random id held in this process with an expiry (never the token, which stays out
of URLs, cookies and logs); the cookie is HttpOnly, SameSite=Strict, and Secure when the page
came over https. Each session also has a CSRF token that every inspector POST must send back in
``X-CSRF-Token``. Sessions end at logout, at expiry, or when the process restarts.
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field

from aiohttp import web

COOKIE = "gatebot_inspector"
LIFETIME_S = 8 * 3600
MAX_SESSIONS = 1000


@dataclass
class Session:
    id: str
    staff: str
    expires: float
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))


class Sessions:
    """Live sessions by id, bounded: when full, the one expiring first goes."""

    def __init__(self, lifetime_s: float = LIFETIME_S) -> None:
        self.lifetime_s = lifetime_s
        self._by_id: dict[str, Session] = {}

    def open(self, staff: str) -> Session:
        self._forget_expired()
        if len(self._by_id) >= MAX_SESSIONS:
            del self._by_id[min(self._by_id.values(), key=lambda s: s.expires).id]
        session = Session(secrets.token_urlsafe(32), staff, time.monotonic() + self.lifetime_s)
        self._by_id[session.id] = session
        return session

    def find(self, session_id: str | None) -> Session | None:
        if not session_id:
            return None
        found = self._by_id.get(session_id)
        if found is None or found.expires <= time.monotonic():
            self._by_id.pop(session_id, None)
            return None
        return found

    def close(self, session_id: str | None) -> None:
        if session_id:
            self._by_id.pop(session_id, None)

    def _forget_expired(self) -> None:
        clock = time.monotonic()
        for key in [k for k, s in self._by_id.items() if s.expires <= clock]:
            del self._by_id[key]

    def __len__(self) -> int:
        return len(self._by_id)


def is_https(request: web.Request, trusted_proxies: list[str]) -> bool:
    """Over TLS here, or behind a trusted proxy that says the browser used https."""
    if request.secure:
        return True
    proto = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    return (request.remote or "") in trusted_proxies and proto == "https"


def set_cookie(resp: web.StreamResponse, session: Session, secure: bool, lifetime_s: float) -> None:
    resp.set_cookie(
        COOKIE,
        session.id,
        max_age=int(lifetime_s),
        path="/inspector",
        httponly=True,
        samesite="Strict",
        secure=secure,
    )


def clear_cookie(resp: web.StreamResponse) -> None:
    resp.del_cookie(COOKIE, path="/inspector")


def csrf_ok(session: Session, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(session.csrf.encode(), (given or "").encode())
