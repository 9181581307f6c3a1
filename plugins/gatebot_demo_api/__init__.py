"""The sample pack's DEMO orders API under ``/demo-api``, on only when the pack's ``apis.yaml``
declares an API with ``demo: true``. See :mod:`gatebot_demo_api.server`."""

from __future__ import annotations

import logging
import os
from typing import Any

from gatebot_catalog.spec import load_catalog

from bot.hookspecs import hookimpl
from gatebot_demo_api.server import PREFIX, DemoApi

log = logging.getLogger(__name__)


def demo_for(app: Any) -> DemoApi | None:
    """The demo API the app's pack asks for, or None (the pack declares no demo API)."""
    catalog = load_catalog(app.pack.root)
    api = catalog.demo_api() if catalog is not None else None
    if api is None:
        return None
    token = None
    if api.auth is not None:
        token = os.environ.get(api.auth.env) or api.auth.demo_default
    return DemoApi(token)


@hookimpl
def startup(app: Any) -> None:
    # startup runs before channels start, so the web channel serves these routes.
    demo = demo_for(app)
    if demo is None:
        return
    app.routes.extend(demo.routes())
    log.info("serving the DEMO orders API under %s (in memory, reset at every start)", PREFIX)
