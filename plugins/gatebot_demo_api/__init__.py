"""The sample pack's DEMO orders API under ``/demo-api``, on only when the pack's ``apis.yaml``
declares an API with ``demo: true``. See :mod:`gatebot_demo_api.server`."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from gatebot_catalog.spec import load_catalog

from bot.hookspecs import hookimpl
from gatebot_demo_api.server import PREFIX, DemoApi

log = logging.getLogger(__name__)


def demo_for(host: Any) -> DemoApi | None:
    """The demo API the pack asks for (``host.pack``; the app or the channel host), or None
    (the pack declares no demo API)."""
    catalog = load_catalog(host.pack.root)
    api = catalog.demo_api() if catalog is not None else None
    if api is None:
        return None
    token = None
    if api.auth is not None:
        token = os.environ.get(api.auth.env) or api.auth.demo_default
    return DemoApi(token)


@hookimpl
def register_routes(register: Callable[[str, str, Any], None], host: Any) -> None:
    demo = demo_for(host)
    if demo is None:
        return
    for method, path, handler in demo.routes():
        register(method, path, handler)
    log.info("serving the DEMO orders API under %s (in memory, reset at every start)", PREFIX)
