"""Limits and exposure of the widget's server: rate limits per client IP and per staff token,
the origin allow-list, security headers, and who may read /metrics and the demo API.

The client is the socket's peer; ``X-Forwarded-For`` counts only when that peer is one of
``GATEBOT_TRUSTED_PROXIES`` (anyone else could write any address there).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web

from bot.config import Settings
from bot.redisconn import redis_client
from gatebot_web import inputs
from gatebot_web.errors import ApiError
from gatebot_web.ratelimit import SharedCounts, SharedRateLimiter

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
CREATE_ROUTE = "/api/conversations"
MESSAGE_ROUTE = "/api/conversations/{id}/messages"
#: The demo page has one inline script (the "try" buttons) and inline styles; everything else
#: comes from this origin. The widget's own requests go to this origin (or its data-api).
CSP = (
    "default-src 'self'; script-src 'self' 'sha256-{inline}'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self' ws: wss:; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'self'; object-src 'none'"
)
FORWARDED = ("X-Forwarded-For", "Forwarded", "X-Real-IP")
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "strict-origin-when-cross-origin",
}


class Guard:
    """The limiters (in Redis with ``REDIS_URL``, shared by every process; else bounded tables in
    this process) and the settings they read."""

    def __init__(self, settings: Settings, inline_script: str) -> None:
        self.settings = settings
        client = redis_client(settings)
        self.counts = SharedCounts(client) if client is not None else None
        self.conversations = self._limiter("conversations", settings.rate_conversations)
        self.messages = self._limiter("messages", settings.rate_messages)
        self.staff = self._limiter("staff", settings.rate_staff)
        self.staff_failures = self._limiter("staff_failures", settings.rate_staff_failures)
        #: Messages per conversation (a fixed 20 a minute), whatever the client's address.
        self.per_conversation = self._limiter("conversation", 20)
        digest = hashlib.sha256(inline_script.encode()).digest()
        self.csp = CSP.replace("{inline}", base64.b64encode(digest).decode())

    def _limiter(self, name: str, per_minute: int) -> SharedRateLimiter:
        return SharedRateLimiter(name, per_minute, 60.0, self.counts)

    async def close(self) -> None:
        if self.counts is not None:
            await self.counts.close()

    def client_ip(self, request: web.Request) -> str:
        peer = request.remote or ""
        if peer not in self.settings.trusted_proxies:
            return peer
        # The rightmost address no trusted proxy wrote is the one the client cannot forge.
        hops = [h.strip() for h in request.headers.get("X-Forwarded-For", "").split(",")]
        for hop in reversed([h for h in hops if h]):
            if hop not in self.settings.trusted_proxies:
                return hop
        return peer

    def origin_allowed(self, request: web.Request, origin: str) -> bool:
        """The bot's own host (any scheme: a TLS proxy may stand in front) or a listed origin."""
        if origin.rstrip("/") in self.settings.allowed_origins:
            return True
        try:
            return urlsplit(origin).netloc.lower() == request.host.lower()
        except ValueError:
            return False

    async def limit(self, limiter: SharedRateLimiter, key: str, what: str) -> None:
        allowed, wait = await limiter.allow(key)
        if not allowed:
            raise ApiError(
                429,
                "rate_limited",
                f"too many {what}; wait a little and try again",
                {"Retry-After": str(max(1, round(wait)))},
            )

    async def check_staff(self, request: web.Request, expected: str | None) -> None:
        """Per token when it is the admin token; per client IP when not (a guesser's tokens are
        all different, so only the address can count them)."""
        given = inputs.bearer(request)
        if expected and given and hmac.compare_digest(given.encode(), expected.encode()):
            key = hashlib.sha256(given.encode()).hexdigest()
            await self.limit(self.staff, key, "staff requests")
        else:
            await self.limit(self.staff_failures, self.client_ip(request), "staff requests")

    def check_private(self, request: web.Request, token: str | None) -> None:
        """/metrics: the Bearer token when one is set, else loopback only. The demo API passes
        no token: the bot itself calls it over loopback, so nobody else needs it."""
        if token:
            given = inputs.bearer(request) or ""
            if not hmac.compare_digest(given.encode(), token.encode()):
                raise ApiError(401, "unauthorized", "missing or wrong metrics token")
            return
        # A proxy on this host makes every visitor a loopback peer: a forwarded request is not
        # a local client's, whether or not the proxy is listed as trusted.
        forwarded = any(h in request.headers for h in FORWARDED)
        if forwarded or not _loopback(self.client_ip(request)):
            raise ApiError(403, "forbidden", "this path answers local clients only")

    def check_origin(self, request: web.Request) -> None:
        """A browser page from an origin not allowed may not use the API (nor its websocket,
        which CORS does not cover). No Origin header: not a browser's cross-site request."""
        origin = request.headers.get("Origin")
        if origin is not None and not self.origin_allowed(request, origin):
            raise ApiError(403, "origin_not_allowed", "this site may not use the widget's API")


def guard_middleware(
    guard: Guard, admin_token: Callable[[], str | None]
) -> Callable[..., Awaitable[web.StreamResponse]]:
    """Refusals before any work: origin, then the limit of the route's kind."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        route = _route(request) or ""
        if route.startswith(CREATE_ROUTE) and request.method != "OPTIONS":
            guard.check_origin(request)
        if request.method == "POST" and route == CREATE_ROUTE:
            await guard.limit(guard.conversations, guard.client_ip(request), "new conversations")
        elif request.method == "POST" and route == MESSAGE_ROUTE:
            await guard.limit(guard.messages, guard.client_ip(request), "messages")
        elif route.startswith("/api/staff/"):
            await guard.check_staff(request, admin_token())
        elif route == "/metrics":
            guard.check_private(request, guard.settings.metrics_token)
        elif route.startswith("/demo-api"):
            guard.check_private(request, None)
        return await handler(request)

    return middleware


def _route(request: web.Request) -> str | None:
    resource = request.match_info.route.resource
    return resource.canonical if resource else None


def cors_and_security_headers(guard: Guard, request: web.Request, resp: web.StreamResponse) -> None:
    """CORS for allowed origins only (echoed, never ``*``), and the security headers everywhere."""
    origin = request.headers.get("Origin")
    if origin is not None and guard.origin_allowed(request, origin):
        resp.headers["Access-Control-Allow-Origin"] = origin
        resp.headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type"
        resp.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
        # Without this a page on another site cannot read how long a 429 asks it to wait.
        resp.headers["Access-Control-Expose-Headers"] = "Retry-After"
    # The answer depends on Origin: a cache must not hand one site's answer to another.
    resp.headers["Vary"] = "Origin"
    resp.headers.update(SECURITY_HEADERS)
    resp.headers["Content-Security-Policy"] = guard.csp


def _loopback(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False
