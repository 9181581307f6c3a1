"""The web widget channel: the REST API, a websocket for live events, widget.js and a demo page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.hookspecs import hookimpl
from gatebot_web.channel import WebChannel

__all__ = ["WebChannel"]


@hookimpl(trylast=True)
def register_channels(register: Callable[[Any], None]) -> None:
    register(WebChannel)
