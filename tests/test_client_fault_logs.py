"""A request aiohttp cannot parse (an unsupported or corrupt Content-Encoding) is answered 400
and logged as one line at DEBUG, never as an ERROR traceback any client could fill the log with;
a server fault keeps its level (found by re-running bench/fuzz_api.py with seed 16)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from aiohttp.test_utils import TestClient
from gatebot_web.errors import ClientFaultsQuiet

BODIES = [
    ("br", b'{"language": "en"}'),  # an encoding the server does not decode
    ("gzip", b"\x1f\x8b not gzip at all"),
    ("deflate", b"x\x9c\xff\xff\xff not deflate"),
]


async def _raw(client: TestClient, encoding: str, body: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(
        b"POST /api/conversations HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + f"Content-Type: application/json\r\nContent-Encoding: {encoding}\r\n".encode()
        + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


@pytest.mark.parametrize(("encoding", "body"), BODIES)
async def test_an_undecodable_body_is_400_and_no_error_is_logged(
    client: TestClient, caplog: pytest.LogCaptureFixture, encoding: str, body: bytes
) -> None:
    caplog.set_level(logging.DEBUG, logger="aiohttp.server")
    answer = await _raw(client, encoding, body)
    assert answer.split(b"\r\n")[0].endswith(b" 400 Bad Request"), answer[:80]
    await asyncio.sleep(0)  # the server logs as it closes the connection
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == [], [r.getMessage() for r in loud]


def test_a_server_fault_keeps_its_level() -> None:
    try:
        raise RuntimeError("a bug")
    except RuntimeError as exc:
        record = logging.LogRecord(
            "aiohttp.server", logging.ERROR, __file__, 1, "Unhandled exception", (), (
                type(exc), exc, exc.__traceback__)
        )  # fmt: skip
    assert ClientFaultsQuiet().filter(record) and record.levelno == logging.ERROR
