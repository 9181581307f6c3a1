"""The Discord channel: customers in DMs and mentions (a thread each), and a help desk for staff.

discord.py is an optional dependency (``pip install 'gatebot[discord]'``): without it this plugin
registers nothing, so an install without Discord has no broken plugin to report. The adapter is
``channel.DiscordChannel``; ``handlers`` routes gateway events and ``render`` shapes messages.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Callable
from typing import Any

from bot.hookspecs import hookimpl

log = logging.getLogger(__name__)


@hookimpl
def register_channels(register: Callable[[Any], None]) -> None:
    if importlib.util.find_spec("discord") is None:
        if os.environ.get("DISCORD_BOT_TOKEN"):
            log.error(
                "DISCORD_BOT_TOKEN is set but discord.py is not installed: "
                "pip install 'gatebot[discord]'"
            )
        return
    from gatebot_discord.channel import DiscordChannel

    register(DiscordChannel)
