"""The HTTP routes plugins register (the sample pack's demo orders API), served on a loopback port
for commands that run no web channel (``gatebot chat``), so a flow's API calls reach them."""

from __future__ import annotations

import socket

from aiohttp import web

from bot.extend.host import Route


def reserve_port() -> socket.socket:
    """A listening socket on 127.0.0.1 at a free port, held until the server takes it over, so no
    other process can take the port between choosing it and serving on it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


async def serve_routes(routes: list[Route], sock: socket.socket) -> web.AppRunner:
    """Serve ``routes`` on ``sock``; the caller cleans the returned runner up."""
    app = web.Application()
    for method, path, handler in routes:
        app.router.add_route(method, path, handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    return runner
