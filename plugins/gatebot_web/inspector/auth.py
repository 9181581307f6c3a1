"""Log in, log out, and the session every other inspector request needs.

Login attempts count against the staff failure limit per client IP (a guesser's tokens are all
different); a session's requests count against the staff limit per session, as the staff API's
count per token.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from bot.extend.host import ChannelHost
from gatebot_web.errors import ApiError
from gatebot_web.guard import Guard
from gatebot_web.inspector import html
from gatebot_web.inspector.sessions import (
    COOKIE,
    Session,
    Sessions,
    clear_cookie,
    csrf_ok,
    is_https,
    set_cookie,
)
from gatebot_web.staff import admin_token

Handler = Callable[[web.Request, Session], Awaitable[web.StreamResponse]]
MAX_FORM = 4096


def _html(text: str, status: int = 200) -> web.Response:
    resp = web.Response(text=text, content_type="text/html", charset="utf-8", status=status)
    resp.headers["Cache-Control"] = "no-store"
    return resp


def safe_next(path: str | None) -> str:
    """Where to go after logging in: an inspector page of this site, never another site."""
    if path and re.fullmatch(r"/inspector(/[^\\\s]*)?(\?\S*)?", path) and "//" not in path:
        return path
    return "/inspector"


async def _form(request: web.Request) -> Mapping[str, Any] | None:
    """The posted form, or None when it is not one that can be read (bad bytes, bad encoding)."""
    try:
        return await request.post()
    except ValueError:  # UnicodeDecodeError too
        return None


def _see_other(location: str) -> web.Response:
    return web.Response(status=303, headers={"Location": location, "Cache-Control": "no-store"})


class Auth:
    def __init__(self, host: ChannelHost, guard: Guard, sessions: Sessions) -> None:
        self.host, self.guard, self.sessions = host, guard, sessions

    async def login_page(self, request: web.Request) -> web.Response:
        if await self.sessions.find(request.cookies.get(COOKIE)):
            return _see_other(safe_next(request.query.get("next")))
        return _html(html.login_form(None, safe_next(request.query.get("next"))))

    async def login(self, request: web.Request) -> web.StreamResponse:
        await self.guard.limit(self.guard.staff_failures, self.guard.client_ip(request), "log-ins")
        expected = admin_token(self.host)
        if not expected:
            return _html(html.login_form("The inspector is off: set GATEBOT_ADMIN_TOKEN."), 403)
        if (request.content_length or 0) > MAX_FORM:
            return _html(html.login_form("That form is too large."), 413)
        form = await _form(request)
        if form is None:
            return _html(html.login_form("That form could not be read."), 400)
        token, staff = str(form.get("token", "")), str(form.get("staff", "")).strip()[:80]
        after = safe_next(str(form.get("next", "")))
        if not hmac.compare_digest(token.encode(), expected.encode()):
            return _html(html.login_form("Wrong token.", after), 401)
        if not staff:
            return _html(
                html.login_form("Say who you are: your name is what staff see.", after), 400
            )
        session = await self.sessions.open(staff, expected)
        resp = _see_other(after)
        secure = is_https(request, self.guard.settings.trusted_proxies)
        set_cookie(resp, session, secure, self.sessions.lifetime_s)
        return resp

    async def logout(self, request: web.Request) -> web.StreamResponse:
        session = await self.sessions.find(request.cookies.get(COOKIE))
        if session is not None:
            form = await _form(request) or {}
            if not csrf_ok(session, str(form.get("csrf", ""))):
                raise ApiError(403, "forbidden", "missing or wrong CSRF token")
            await self.sessions.close(session.id)
        resp = _see_other("/inspector/login")
        clear_cookie(resp)
        return resp

    def required(
        self, handler: Handler, *, page: bool
    ) -> Callable[..., Awaitable[web.StreamResponse]]:
        """``handler`` behind a session: a page without one redirects to the login page, JSON
        answers 401. A POST must carry the session's CSRF token in ``X-CSRF-Token``."""

        async def wrapped(request: web.Request) -> web.StreamResponse:
            session = await self.sessions.find(request.cookies.get(COOKIE))
            if session is None:
                if page:
                    return _see_other("/inspector/login?" + urlencode({"next": request.path_qs}))
                raise ApiError(401, "unauthorized", "log in at /inspector/login first")
            key = hashlib.sha256(session.id.encode()).hexdigest()
            await self.guard.limit(self.guard.staff, "inspector:" + key, "staff requests")
            if request.method == "POST" and not csrf_ok(
                session, request.headers.get("X-CSRF-Token")
            ):
                raise ApiError(403, "forbidden", "missing or wrong CSRF token")
            return await handler(request, session)

        return wrapped
