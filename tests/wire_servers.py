"""Loopback servers that speak just enough of two model APIs for the real SDKs to talk to.

``WireServer("anthropic")`` answers ``POST /v1/messages`` as the Messages API does;
``WireServer("openai")`` answers ``POST /v1/chat/completions`` as Chat Completions does. Each
binds 127.0.0.1 on a free port, records every request (path, headers, JSON body) and answers from
a script: a success, an error status (optionally with Retry-After), or a slow answer for timeout
tests. A request with no credential header gets a 401, as from the real APIs. Nothing is logged,
and no answer ever echoes a request header, so a key stays where the test put it.

    async with WireServer("anthropic") as server:
        server.script(fail(429, retry_after="0"), ok("Yes [faq-docker].", 12, 7))
        ...  # point ANTHROPIC_BASE_URL at server.base_url
        assert len(server.requests) == 2
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, Literal

from aiohttp import web

Api = Literal["anthropic", "openai"]

# Error bodies as each API writes them, by status. Anthropic's 529 is its "overloaded".
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}
_OPENAI_ERRORS = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}


@dataclass(frozen=True)
class Answer:
    """One scripted answer. Build with :func:`ok`, :func:`fail` or :func:`slow`."""

    status: int = 200
    text: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # held this long (or until the server closes) before answering
    message: str = ""  # an error's message; the default says which status was scripted


def ok(text: str, tokens_in: int = 12, tokens_out: int = 7) -> Answer:
    return Answer(200, text, tokens_in, tokens_out)


def fail(
    status: int,
    retry_after: str | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    message: str = "",
) -> Answer:
    """An error status in the API's own error shape; ``retry_after`` sets the Retry-After header."""
    sent = dict(headers or {})
    if retry_after is not None:
        sent["retry-after"] = retry_after
    return Answer(status, headers=sent, message=message)


def slow(seconds: float, then: Answer | None = None) -> Answer:
    """``then`` (a success by default), held ``seconds`` first: longer than the client waits."""
    return replace(then or ok("too late"), delay_s=seconds)


@dataclass
class Seen:
    """One request as the server received it. Headers hold the credential: kept out of repr so
    a failing assertion never prints it."""

    method: str
    path: str
    headers: dict[str, str] = field(repr=False)
    body: Any


class WireServer:
    def __init__(self, api: Api, *, default: Answer | None = None) -> None:
        self.api = api
        self.requests: list[Seen] = []
        self.default = default or ok("Hello.")  # what is answered once the script runs out
        self._script: list[Answer] = []
        self._ids = itertools.count(1)
        self._released = asyncio.Event()  # set on close: slow answers stop waiting
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        """What each SDK takes as its base URL: the Anthropic SDK adds /v1 itself, OpenAI's not."""
        root = f"http://127.0.0.1:{self.port}"
        return root if self.api == "anthropic" else root + "/v1"

    def script(self, *answers: Answer, then: Answer | None = None) -> None:
        """Answer the next requests with ``answers`` in order, then with ``then`` (if given)."""
        self._script = list(answers)
        if then is not None:
            self.default = then

    async def start(self) -> WireServer:
        app = web.Application()
        path = "/v1/messages" if self.api == "anthropic" else "/v1/chat/completions"
        app.router.add_post(path, self._handle)
        # A short shutdown: anything still held was released by close() already.
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def close(self) -> None:
        self._released.set()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def __aenter__(self) -> WireServer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _handle(self, request: web.Request) -> web.Response:
        try:
            body: Any = await request.json()
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in request.headers.items()}
        self.requests.append(Seen(request.method, request.path, headers, body))
        if not (headers.get("x-api-key") or headers.get("authorization")):
            # As the real APIs do; the script is not consumed by a request that never got in.
            return web.json_response(
                self._error(fail(401, message="no credential sent")), status=401
            )
        answer = self._script.pop(0) if self._script else self.default
        if answer.delay_s:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._released.wait(), answer.delay_s)
        if answer.status != 200:
            return web.json_response(
                self._error(answer), status=answer.status, headers=dict(answer.headers)
            )
        model = body.get("model", "") if isinstance(body, dict) else ""
        return web.json_response(self._success(answer, model), headers=dict(answer.headers))

    def _success(self, answer: Answer, model: str) -> dict[str, Any]:
        n = next(self._ids)
        if self.api == "anthropic":
            return {
                "id": f"msg_{n:04d}",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": answer.text}],
                "model": model,
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": answer.tokens_in, "output_tokens": answer.tokens_out},
            }
        return {
            "id": f"chatcmpl-{n:04d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": answer.tokens_in,
                "completion_tokens": answer.tokens_out,
                "total_tokens": answer.tokens_in + answer.tokens_out,
            },
        }

    def _error(self, answer: Answer) -> dict[str, Any]:
        status = answer.status
        message = answer.message or f"scripted {status}"
        if self.api == "anthropic":
            kind = _ANTHROPIC_ERRORS.get(status, "api_error")
            return {"type": "error", "error": {"type": kind, "message": message}}
        kind = _OPENAI_ERRORS.get(status, "server_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}
