"""The email transport base. With none configured, sending fails honestly."""

from __future__ import annotations

from abc import ABC, abstractmethod

from bot.errors import GatebotError


class EmailNotConfigured(GatebotError):
    """No email transport is configured; nothing was sent."""


class EmailTransport(ABC):
    name: str = ""

    @abstractmethod
    async def send(self, to: str, subject: str, body: str) -> str:
        """Send one message; return the transport's message id. Raise on any failure."""


class NoEmail(EmailTransport):
    """Used when GATEBOT_EMAIL names no transport: an honest refusal, never a fake OK."""

    name = "none"

    async def send(self, to: str, subject: str, body: str) -> str:
        raise EmailNotConfigured(
            "no email transport is configured (set GATEBOT_EMAIL to a registered transport)"
        )
