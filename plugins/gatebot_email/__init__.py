"""The SMTP email transport (aiosmtplib), configured by ``SMTP_URL``.

``smtp://user:pass@host:25`` (plain, upgraded with STARTTLS when the server offers it),
``smtp+starttls://...`` (STARTTLS required) or ``smtps://...:465`` (TLS from the start).
``SMTP_FROM`` sets the sender. Selected with ``GATEBOT_EMAIL=smtp``. With SMTP_URL unset, sending
fails with a clear error: escalation email is never reported as sent when it was not.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any
from urllib.parse import unquote, urlsplit

from bot.config import Settings
from bot.errors import ConfigError, GatebotError
from bot.extend.email import EmailNotConfigured, EmailTransport
from bot.hookspecs import hookimpl

TIMEOUT = 20.0


class EmailFailed(GatebotError):
    """The SMTP server refused or could not be reached; nothing was sent."""


@dataclass
class SmtpTarget:
    host: str
    port: int
    username: str | None
    password: str | None
    use_tls: bool  # TLS from the first byte (smtps)
    start_tls: bool | None  # True: required; None: if offered


def parse_smtp_url(url: str) -> SmtpTarget:
    parts = urlsplit(url)
    schemes = {
        "smtp": (False, None, 25),
        "smtp+starttls": (False, True, 587),
        "smtps": (True, False, 465),
    }
    if parts.scheme not in schemes or not parts.hostname:
        raise ConfigError(
            "SMTP_URL must look like smtp://host:25, smtp+starttls://user:pass@host:587 "
            "or smtps://user:pass@host:465"
        )
    use_tls, start_tls, default_port = schemes[parts.scheme]
    return SmtpTarget(
        host=parts.hostname,
        port=parts.port or default_port,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        use_tls=use_tls,
        start_tls=start_tls,
    )


class SmtpTransport(EmailTransport):
    name = "smtp"

    def __init__(self, settings: Settings) -> None:
        self.url = os.environ.get("SMTP_URL", "")
        self.sender = os.environ.get("SMTP_FROM", "gatebot@localhost")
        # A bad URL is a configuration error at start, not a surprise at the first escalation.
        self.target = parse_smtp_url(self.url) if self.url else None

    async def send(self, to: str, subject: str, body: str) -> str:
        if self.target is None:
            raise EmailNotConfigured("SMTP_URL is not set; nothing was sent")
        import aiosmtplib

        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = self.sender, to, subject
        message["Message-ID"] = make_msgid(domain="gatebot")
        message.set_content(body)
        t = self.target
        try:
            await aiosmtplib.send(
                message,
                hostname=t.host,
                port=t.port,
                username=t.username,
                password=t.password,
                use_tls=t.use_tls,
                start_tls=t.start_tls,
                timeout=TIMEOUT,
            )
        except (aiosmtplib.SMTPException, OSError) as exc:
            # The server's words, without the URL (it may hold a password).
            raise EmailFailed(
                f"SMTP {t.host}:{t.port} failed: {type(exc).__name__}: {exc}"
            ) from exc
        return str(message["Message-ID"])


@hookimpl
def register_email_transports(register: Callable[[str, Any], None]) -> None:
    register("smtp", SmtpTransport)
