"""The web channel adapter: serves the REST API and the widget on GATEBOT_HOST:GATEBOT_PORT."""

from __future__ import annotations

import logging

from aiohttp import web

from bot.extend.channel import ChannelAdapter
from bot.extend.host import ChannelHost
from gatebot_web.server import build_web_app

log = logging.getLogger(__name__)


class WebChannel(ChannelAdapter):
    name = "web"

    def __init__(self, host: ChannelHost) -> None:
        super().__init__(host)
        self.runner: web.AppRunner | None = None
        self.port: int | None = None

    async def start(self) -> None:
        settings = self.host.settings
        self.runner = web.AppRunner(build_web_app(self.host), access_log=None)
        await self.runner.setup()
        # ``gatebot run --workers N``: every worker binds the same port, the kernel spreads clients.
        reuse = getattr(settings, "reuse_port", False) or None
        site = web.TCPSite(self.runner, settings.host, settings.port, reuse_port=reuse)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else settings.port
        log.info("web widget on http://%s:%s", settings.host, self.port)

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None
