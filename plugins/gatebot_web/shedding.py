"""503 with ``Retry-After`` when the process cannot take a request now: its queue of turns is full
(``Overloaded``) or the database did not answer in time (``DatabaseUnavailable``). Nothing was
changed, so the client sends the same request again; the widget does, with backoff."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

from aiohttp import web

from bot.admission import TurnAdmission
from bot.errors import Overloaded, Unavailable
from gatebot_web.errors import error_response

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: The route whose requests start a turn: shed before any work (a database read included).
TURN_ROUTE = "/api/conversations/{id}/messages"


def unavailable_as_503(admission: TurnAdmission) -> Callable[..., Awaitable[web.StreamResponse]]:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            if admission.full and request.method == "POST" and _route(request) == TURN_ROUTE:
                raise admission.refuse()
            return await handler(request)
        except Unavailable as exc:
            code = "overloaded" if isinstance(exc, Overloaded) else "database_unavailable"
            wait = str(max(1, math.ceil(exc.retry_after)))
            return error_response(503, code, str(exc), {"Retry-After": wait})

    return middleware


def _route(request: web.Request) -> str | None:
    resource = request.match_info.route.resource
    return resource.canonical if resource else None
