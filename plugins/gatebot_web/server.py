"""The widget's REST API and websocket (aiohttp). Bad input gets a JSON error and changes nothing.

Errors are ``{"error": {"code", "message"}}``: unknown conversation 404, wrong token 401, malformed
JSON 400, text over 4,000 characters 413, more than 20 messages a minute per conversation 429
(limits per client IP, origins, headers and /metrics: gatebot_web.guard).
A repeated ``client_message_id`` returns the first answer and makes no second turn.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from aiohttp import WSMsgType, web

from bot.extend.host import ChannelHost
from bot.store import Conversation
from gatebot_web import inputs, openapi
from gatebot_web.errors import ApiError, error_response, quiet_client_faults
from gatebot_web.guard import Guard, cors_and_security_headers, guard_middleware
from gatebot_web.inspector import add_inspector_routes
from gatebot_web.ratelimit import SharedRateLimiter
from gatebot_web.shedding import unavailable_as_503
from gatebot_web.staff import add_staff_routes, admin_token

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
MAX_TEXT = 4000
MAX_BODY = 64 * 1024
MAX_CLIENT_ID = 200
HOST_KEY = web.AppKey("gatebot", ChannelHost)
LIMITER_KEY = web.AppKey("limiter", SharedRateLimiter)
GUARD_KEY = web.AppKey("guard", Guard)
SOCKETS_KEY: web.AppKey[weakref.WeakSet[web.WebSocketResponse]] = web.AppKey("sockets")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


_CODES = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    429: "rate_limited",
}


@web.middleware
async def errors_and_cors(request: web.Request, handler: Handler) -> web.StreamResponse:
    gb = _host(request)
    started = time.perf_counter()
    if request.method == "OPTIONS":
        resp: web.StreamResponse = web.Response(status=204)
    else:
        try:
            resp = await handler(request)
        except ApiError as exc:
            resp = error_response(exc.status, exc.code, exc.message, exc.headers)
        except web.HTTPException as exc:  # aiohttp's own: unknown route, body too large, ...
            if exc.status < 400:
                raise
            resp = error_response(exc.status, _CODES.get(exc.status, "error"), exc.reason)
        except Exception:
            log.exception("unhandled error on %s %s", request.method, request.path)
            resp = error_response(500, "internal", "internal error; nothing was changed")
    if not resp.prepared:
        # The widget runs on the sites GATEBOT_ALLOWED_ORIGINS names; auth is a bearer token.
        cors_and_security_headers(request.app[GUARD_KEY], request, resp)
    route = (
        request.match_info.route.resource.canonical
        if request.match_info.route.resource
        else "unmatched"
    )
    gb.metrics.inc(
        "gatebot_http_requests_total", route=route, method=request.method, status=str(resp.status)
    )
    gb.metrics.observe("gatebot_http_request_seconds", time.perf_counter() - started, route=route)
    return resp


class HasHost(Protocol):
    """The app, as tests hand it to :func:`build_web_app`; the server uses only its host."""

    host: ChannelHost


def _host(request: web.Request) -> ChannelHost:
    return request.app[HOST_KEY]


async def _conversation(request: web.Request, token: str | None) -> Conversation:
    gb = _host(request)
    conv = await gb.load_conversation(inputs.path_id(request))
    if conv is None or conv.channel != "web":
        raise ApiError(404, "not_found", "no such conversation")
    if not token or not gb.token_matches(conv, token):
        raise ApiError(401, "unauthorized", "missing or wrong conversation token")
    return conv


# Request parsing lives in gatebot_web.inputs (bounded body, safe tokens and ids).
_bearer = inputs.bearer
_json_body = inputs.json_body


async def create_conversation(request: web.Request) -> web.Response:
    gb = _host(request)
    body = await _json_body(request)
    language = inputs.language(body, gb.pack.language)
    user_id = inputs.identity(body, gb.settings.identity_secret)
    conv, token = await gb.open_conversation("web", language, user_id and f"web:{user_id}")
    return web.json_response({"id": conv.id, "token": token}, status=201)


async def post_message(request: web.Request) -> web.Response:
    gb = _host(request)
    conv = await _conversation(request, _bearer(request))
    body = await _json_body(request)
    text = inputs.text(body)
    client_id = inputs.client_message_id(body, MAX_CLIENT_ID)
    if len(text) > MAX_TEXT:
        raise ApiError(413, "too_large", f"text is {len(text)} characters; the limit is {MAX_TEXT}")
    inbox_key = f"{conv.id}:{client_id}"
    earlier = await gb.load_message("web", inbox_key)
    if earlier is None:
        allowed, wait = await request.app[LIMITER_KEY].allow(conv.id)
        if not allowed:
            raise ApiError(
                429,
                "rate_limited",
                "too many messages; wait a little and resend",
                {"Retry-After": str(max(1, round(wait)))},
            )
    result = await gb.handle(conv, text, client_id, inbox_key=inbox_key, shed=True)
    # Everything up to here is in this answer or was live: a widget refetching after a
    # reconnect shows only what is newer (and staff messages it has not seen, by id).
    last = await gb.load_last_message_id(conv.id)
    return web.json_response(
        {
            "replies": result.replies,
            "turn": result.record,
            "duplicate": result.duplicate,
            "last_message_id": last,
        }
    )


async def share_context(request: web.Request) -> web.Response:
    """The visitor's consent to share the page, and the page when given (bot.turn.sitecontext)."""
    gb = _host(request)
    conv = await _conversation(request, _bearer(request))
    source, page = inputs.site_context(await _json_body(request))
    return web.json_response(await gb.share_site_context(conv.id, source, page))


async def get_conversation(request: web.Request) -> web.Response:
    gb = _host(request)
    conv = await _conversation(request, _bearer(request))
    stored, stored_turns = await gb.load_transcript(conv.id)
    messages = [
        {
            "id": m.id,
            "role": m.role,
            "text": m.text,
            "status": m.status,
            "created_at": m.created_at.isoformat(),
            # Who on the staff wrote it: their id on the desk and the name the customer sees.
            "author": {"id": m.author, "name": m.author_name} if m.role == "staff" else None,
        }
        for m in stored
    ]
    turns = [t.record for t in stored_turns]
    return web.json_response(
        {
            "id": conv.id,
            "status": conv.status,
            "paused": conv.paused,
            "messages": messages,
            "turns": turns,
        }
    )


async def events(request: web.Request) -> web.StreamResponse:
    """Live events for one conversation. Browsers cannot set headers on a websocket, so the token
    may also come as ``?token=``."""
    gb = _host(request)
    token = _bearer(request) or inputs.token(request.query.get("token"))
    conv = await _conversation(request, token)
    ws = web.WebSocketResponse(heartbeat=30)
    await ws.prepare(request)
    request.app[SOCKETS_KEY].add(ws)
    queue = gb.events.subscribe(conv.id)
    reader = asyncio.ensure_future(ws.receive())
    getter: asyncio.Future[dict[str, Any]] | None = None
    try:
        while not ws.closed:
            getter = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({getter, reader}, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                try:
                    await ws.send_json(getter.result())
                except ConnectionResetError:
                    break  # the browser went away; nothing to report
            else:
                getter.cancel()
            if reader in done:
                msg = reader.result()
                if msg.type in (
                    WSMsgType.CLOSE,
                    WSMsgType.CLOSING,
                    WSMsgType.CLOSED,
                    WSMsgType.ERROR,
                ):
                    break
                reader = asyncio.ensure_future(ws.receive())
    finally:
        # Both waits, whichever is pending: aiohttp cancels this handler when the client closes.
        reader.cancel()
        if getter is not None:
            getter.cancel()
        gb.events.unsubscribe(conv.id, queue)
        await ws.close()
    return ws


async def healthz(request: web.Request) -> web.Response:
    gb = _host(request)
    try:
        await gb.check_database()
    except Exception as exc:
        # The public sees no host, port or driver message; the operator's log has the cause.
        log.warning("healthz: database unavailable (%s)", type(exc).__name__)
        log.debug("healthz: database error: %s", exc)
        return web.json_response(
            {"status": "error", "database": "database unavailable"}, status=503
        )
    info = gb.info()
    # A channel still connecting (or failed) leaves the others serving: degraded, not down.
    channels = info.get("channels", {}).values()
    status = "degraded" if any(c["status"] != "up" for c in channels) else "ok"
    return web.json_response({"status": status, "database": "ok", **info})


async def metrics(request: web.Request) -> web.Response:
    gb = _host(request)
    gb.metrics.set("gatebot_websocket_subscribers", gb.events.subscriber_count())
    return web.Response(
        text=gb.metrics.render(),
        content_type="text/plain",
        headers={"X-Content-Type-Options": "nosniff"},
        charset="utf-8",
    )


async def index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "index.html")


async def widget_js(request: web.Request) -> web.FileResponse:
    resp = web.FileResponse(STATIC / "widget.js")
    resp.headers["Cache-Control"] = "no-cache"
    return resp


async def _close_sockets(app: web.Application) -> None:
    sockets = app[SOCKETS_KEY]
    for ws in [*sockets]:
        await ws.close(code=1001, message=b"server shutting down")


def _inline_script(page: Path) -> str:
    """The demo page's one inline script, whose hash the Content-Security-Policy allows."""
    html = page.read_text(encoding="utf-8")
    start = html.index("<script>") + len("<script>")
    return html[start : html.index("</script>", start)]


def build_web_app(host: ChannelHost | HasHost) -> web.Application:
    """The widget's server over ``host``; given the app (as tests do), over the app's host."""
    gb = host if isinstance(host, ChannelHost) else host.host
    guard = Guard(gb.settings, _inline_script(STATIC / "index.html"))
    quiet_client_faults()
    middlewares = [
        errors_and_cors,
        guard_middleware(guard, lambda: admin_token(gb)),
        unavailable_as_503(gb.admission),
    ]
    app = web.Application(middlewares=middlewares, client_max_size=MAX_BODY)
    app[HOST_KEY] = gb
    app[GUARD_KEY] = guard
    app[LIMITER_KEY] = guard.per_conversation
    app.on_cleanup.append(lambda _app: guard.close())
    app[SOCKETS_KEY] = weakref.WeakSet()
    app.on_shutdown.append(_close_sockets)
    gb.metrics.describe(
        "gatebot_http_requests_total", "counter", "HTTP requests, by route and status."
    )
    gb.metrics.describe("gatebot_http_request_seconds", "histogram", "HTTP request time, by route.")
    gb.metrics.describe("gatebot_websocket_subscribers", "gauge", "Open live-event websockets.")
    for method, path, handler in gb.routes:  # register_routes: /slack/events, /demo-api/...
        app.router.add_route(method, path, handler)
    app.router.add_post("/api/conversations", create_conversation)
    app.router.add_post("/api/conversations/{id}/messages", post_message)
    app.router.add_get("/api/conversations/{id}", get_conversation)
    app.router.add_post("/api/conversations/{id}/context", share_context)
    app.router.add_get("/api/conversations/{id}/events", events)
    add_staff_routes(app, gb, _bearer, _json_body)
    add_inspector_routes(app, gb, guard)
    app.router.add_get("/api/openapi.json", openapi.serve)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/widget.js", widget_js)
    app.router.add_get("/", index)
    return app
