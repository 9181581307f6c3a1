"""The inspector's staff sessions: log in once with GATEBOT_ADMIN_TOKEN, then a cookie.

A session is a random id with an expiry (never the token, which stays out of URLs, cookies and
logs), kept in the database every process shares (:mod:`bot.store.staffsessions`): a cookie made
on one process works on the others behind a plain load balancer, and logout on one ends it on
all. The cookie is HttpOnly, SameSite=Strict, and Secure when the page came over https. Each
session also has a CSRF token, stored with it, that every inspector POST must send back in
``X-CSRF-Token``. Sessions end at logout, at expiry, or when GATEBOT_ADMIN_TOKEN changes; a
restart keeps them.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from aiohttp import web

from bot.extend.host import ChannelHost
from bot.store.staffsessions import (
    close_staff_session,
    find_staff_session,
    open_staff_session,
)
from gatebot_web.staff import admin_token

COOKIE = "gatebot_inspector"
LIFETIME_S = 8 * 3600


@dataclass
class Session:
    id: str  # the cookie's value; the database holds only its hash
    staff: str
    csrf: str


class Sessions:
    """Open, find and close sessions in the shared store, off the event loop."""

    def __init__(self, host: ChannelHost, lifetime_s: float = LIFETIME_S) -> None:
        self.host, self.lifetime_s = host, lifetime_s

    async def open(self, staff: str, token: str) -> Session:
        session_id, row = await self.host.read_store(
            open_staff_session, staff, self.lifetime_s, token
        )
        return Session(session_id, row.staff, row.csrf)

    async def find(self, session_id: str | None) -> Session | None:
        token = admin_token(self.host)
        if not session_id or len(session_id) > 128 or not token:
            return None  # no token set: the inspector is off, and every session with it
        row = await self.host.read_store(find_staff_session, session_id, token)
        return None if row is None else Session(session_id, row.staff, row.csrf)

    async def close(self, session_id: str | None) -> None:
        if session_id:
            await self.host.read_store(close_staff_session, session_id)


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
