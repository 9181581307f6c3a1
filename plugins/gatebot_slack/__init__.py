"""The Slack channel: customers in direct messages and mentions, and Slack as a help desk.

Runs on slack-bolt's ``AsyncApp``, in HTTP mode (``POST /slack/events`` on the web channel's
server, signatures checked with SLACK_SIGNING_SECRET) or in Socket Mode (SLACK_APP_TOKEN).
Modules: ``config`` (environment), ``channel`` (the adapter, posting, the help-desk protocol),
``inbound`` (what an event or click means), ``blocks`` (Block Kit rendering).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.hookspecs import hookimpl
from gatebot_slack.channel import EVENTS_PATH, SlackChannel, events_route
from gatebot_slack.config import SlackSettings

__all__ = ["SlackChannel"]


@hookimpl
def register_channels(register: Callable[[Any], None]) -> None:
    register(SlackChannel)


@hookimpl
def register_routes(register: Callable[[str, str, Any], None], host: Any) -> None:
    # HTTP mode only: Socket Mode takes its events over a websocket, and must not expose this.
    if SlackSettings.from_env().mode == "http":
        register("POST", EVENTS_PATH, events_route(host))
