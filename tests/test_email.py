"""The SMTP transport against a real SMTP server (aiosmtpd) on loopback."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from email import message_from_bytes
from typing import Any

import gatebot_email
import pytest
from aiosmtpd.controller import Controller

from bot.config import Settings
from bot.errors import ConfigError
from bot.extend.email import EmailNotConfigured


class Inbox:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append((envelope.rcpt_tos, message_from_bytes(envelope.content)))
        return "250 OK"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def smtp_server() -> Iterator[tuple[Inbox, int]]:
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


async def test_mail_reaches_a_real_smtp_server(
    smtp_server: tuple[Inbox, int], monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    inbox, port = smtp_server
    monkeypatch.setenv("SMTP_URL", f"smtp://127.0.0.1:{port}")
    monkeypatch.setenv("SMTP_FROM", "bot@acme.example")
    transport = gatebot_email.SmtpTransport(settings)
    message_id = await transport.send("support@acme.example", "Unclaimed escalation #1", "Body")
    assert message_id.startswith("<")
    ((rcpt, msg),) = inbox.messages
    assert rcpt == ["support@acme.example"]
    assert msg["Subject"] == "Unclaimed escalation #1" and msg["From"] == "bot@acme.example"
    assert msg["Message-ID"] == message_id and msg.get_payload().strip() == "Body"


async def test_unset_smtp_url_fails_honestly(
    monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    monkeypatch.delenv("SMTP_URL", raising=False)
    with pytest.raises(EmailNotConfigured, match="SMTP_URL is not set"):
        await gatebot_email.SmtpTransport(settings).send("a@b.co", "s", "b")


async def test_unreachable_server_is_a_failure_without_the_password(
    monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    monkeypatch.setenv("SMTP_URL", f"smtp://bot:s3cret@127.0.0.1:{free_port()}")
    with pytest.raises(gatebot_email.EmailFailed) as info:
        await gatebot_email.SmtpTransport(settings).send("a@b.co", "s", "b")
    assert "s3cret" not in str(info.value)


def test_smtp_urls() -> None:
    t = gatebot_email.parse_smtp_url("smtps://u%40x:p@mail.example")
    assert (t.host, t.port, t.username, t.password, t.use_tls) == (
        "mail.example",
        465,
        "u@x",
        "p",
        True,
    )
    assert gatebot_email.parse_smtp_url("smtp+starttls://h").start_tls is True
    with pytest.raises(ConfigError, match="SMTP_URL must look like"):
        gatebot_email.parse_smtp_url("http://h")
