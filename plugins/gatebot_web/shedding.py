"""503 with ``Retry-After`` when the process cannot take a request now: its queue of turns is full
(``Overloaded``) or the database did not answer in time (``DatabaseUnavailable``). Nothing was
changed, so the client sends the same request again; the widget does, with backoff."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

from aiohttp import web

from bot.errors import Overloaded, Unavailable
from gatebot_web.errors import error_response


@web.middleware
async def unavailable_as_503(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    try:
        return await handler(request)
    except Unavailable as exc:
        code = "overloaded" if isinstance(exc, Overloaded) else "database_unavailable"
        wait = str(max(1, math.ceil(exc.retry_after)))
        return error_response(503, code, str(exc), {"Retry-After": wait})
