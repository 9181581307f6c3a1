"""Slack settings, read from the environment: the mode, the credentials, and what is missing.

This module owns the names of the environment variables and the choice between HTTP mode and
Socket Mode. The credentials are kept out of ``repr`` so a logged settings object shows none.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.errors import GatebotError

MODES = ("http", "socket")
DEFAULT_API_URL = "https://slack.com/api/"


class SlackError(GatebotError):
    """Slack refused or could not be reached (a bad token, no connection, the channel not up)."""


@dataclass(frozen=True)
class SlackSettings:
    mode: str
    bot_token: str = field(default="", repr=False)
    signing_secret: str = field(default="", repr=False)
    app_token: str = field(default="", repr=False)
    api_url: str = DEFAULT_API_URL
    oauth_vars: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SlackSettings:
        """SLACK_MODE picks the mode; unset, it is HTTP when a signing secret is given and Socket
        Mode when only an app-level token is."""
        env = os.environ if env is None else env
        bot_token = env.get("SLACK_BOT_TOKEN", "").strip()
        signing_secret = env.get("SLACK_SIGNING_SECRET", "").strip()
        app_token = env.get("SLACK_APP_TOKEN", "").strip()
        mode = env.get("SLACK_MODE", "").strip().lower()
        if not mode:
            mode = "socket" if app_token and not signing_secret else "http"
        api_url = env.get("SLACK_API_URL", "").strip() or DEFAULT_API_URL
        # slack_sdk joins the method name straight onto the base URL.
        if not api_url.endswith("/"):
            api_url += "/"
        oauth = bool(env.get("SLACK_CLIENT_ID") and env.get("SLACK_CLIENT_SECRET"))
        return cls(mode, bot_token, signing_secret, app_token, api_url, oauth)

    @property
    def problems(self) -> list[str]:
        """What keeps the channel from starting, one line each; empty when configured."""
        problems: list[str] = []
        if self.mode not in MODES:
            problems.append(f"SLACK_MODE must be http or socket, not {self.mode!r}")
        if not self.bot_token:
            problems.append("SLACK_BOT_TOKEN (the bot token, xoxb-...) is not set")
        if self.mode == "http" and not self.signing_secret:
            problems.append("SLACK_SIGNING_SECRET is not set (HTTP mode verifies every request)")
        if self.mode == "socket" and not self.app_token:
            problems.append("SLACK_APP_TOKEN (the app-level token, xapp-...) is not set")
        if self.oauth_vars:
            # slack-bolt reads these itself and then drops the bot token for its OAuth flow.
            problems.append(
                "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are set: this channel serves one "
                "workspace with SLACK_BOT_TOKEN; unset them"
            )
        return problems
