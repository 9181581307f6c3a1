"""Loopback servers that speak just enough of three model APIs for the real SDKs to talk to.

``WireServer("anthropic")`` answers ``POST /v1/messages`` as the Messages API does;
``WireServer("openai")`` answers ``POST /v1/chat/completions`` as Chat Completions does;
``WireServer("google")`` answers ``POST /VERSION/models/MODEL:generateContent`` as Gemini does. Each
binds 127.0.0.1 on a free port, records every request (path, headers, JSON body) and answers from
a script: a success, an error status (optionally with Retry-After), a slow answer for timeout
tests, a tool-calling answer (:func:`use`), or a 200 with a body of another shape
(:func:`garbage`). Requests that offer tools are checked as the real
APIs check them (wire-safe tool names; every call answered by a result with its id; Anthropic's
"blocks need tools defined"; Gemini's one function response per function call, by name), so a
provider that sends a malformed exchange gets the 400 it would
get in production. A request with no credential header gets a 401, as from the real APIs.
Nothing is logged, and no answer ever echoes a request header, so a key stays where the test put
it.

    async with WireServer("anthropic") as server:
        server.script(fail(429, retry_after="0"), ok("Yes [faq-docker].", 12, 7))
        ...  # point ANTHROPIC_BASE_URL at server.base_url
        assert len(server.requests) == 2
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, Literal

from aiohttp import web

Api = Literal["anthropic", "openai", "google"]

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
# Google writes a canonical status word where the others write an error type.
_GOOGLE_ERRORS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_PATHS = {
    "anthropic": "/v1/messages",
    "openai": "/v1/chat/completions",
    # The model is in the path: ``/v1/models/gemini-test:generateContent`` (the SDK picks v1).
    "google": "/{version}/models/{call}",
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
    #: Tool calls as (wire name, arguments); a str argument is sent as is (OpenAI only: bad JSON).
    #: Gemini's calls carry ids and a thought signature, as Gemini 3 sends them.
    tool_calls: tuple[tuple[str, Any], ...] = ()
    #: Sent as the whole body instead of the API's JSON (:func:`garbage`).
    raw: bytes | None = None
    content_type: str = "application/json"


def ok(text: str, tokens_in: int = 12, tokens_out: int = 7) -> Answer:
    return Answer(200, text, tokens_in, tokens_out)


def use(*calls: tuple[str, Any], text: str = "") -> Answer:
    """A tool-calling answer: ``use(("knowledge_search", {"query": "sso"}))``."""
    return Answer(200, text, 20, 9, tool_calls=tuple(calls))


def garbage(
    body: bytes = b"<html>502 Bad Gateway</html>", content_type: str = "text/html"
) -> Answer:
    """A 200 whose body is not the API's answer: a proxy's page, a truncated or foreign JSON."""
    return Answer(200, raw=body, content_type=content_type)


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
        """What each SDK takes as its base URL: the Anthropic and Google SDKs add their version
        themselves, OpenAI's not."""
        root = f"http://127.0.0.1:{self.port}"
        return root + "/v1" if self.api == "openai" else root

    def script(self, *answers: Answer, then: Answer | None = None) -> None:
        """Answer the next requests with ``answers`` in order, then with ``then`` (if given)."""
        self._script = list(answers)
        if then is not None:
            self.default = then

    async def start(self) -> WireServer:
        app = web.Application()
        app.router.add_post(_PATHS[self.api], self._handle)
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
        if not (
            headers.get("x-api-key")
            or headers.get("authorization")
            or headers.get("x-goog-api-key")
        ):
            # As the real APIs do; the script is not consumed by a request that never got in.
            return web.json_response(
                self._error(fail(401, message="no credential sent")), status=401
            )
        problem = self._malformed(body) if isinstance(body, dict) else None
        if problem:
            return web.json_response(self._error(fail(400, message=problem)), status=400)
        answer = self._script.pop(0) if self._script else self.default
        if answer.delay_s:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._released.wait(), answer.delay_s)
        if answer.raw is not None:
            return web.Response(body=answer.raw, content_type=answer.content_type)
        if answer.status != 200:
            return web.json_response(
                self._error(answer), status=answer.status, headers=dict(answer.headers)
            )
        model = body.get("model", "") if isinstance(body, dict) else ""
        if self.api == "google":
            model = request.path.rsplit("/", 1)[-1].removesuffix(":generateContent")
            return web.json_response(_google_success(answer, model, next(self._ids)))
        return web.json_response(self._success(answer, model), headers=dict(answer.headers))

    def _malformed(self, body: dict[str, Any]) -> str | None:
        """What the real API would refuse about a request's tools or tool exchange, if anything."""
        if self.api == "google":
            return _google_malformed(body)
        tools = body.get("tools") or []
        for tool in tools:
            name = tool.get("name") if self.api == "anthropic" else tool["function"].get("name")
            if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name or ""):
                return f"tools: name {name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$"
        if self.api == "anthropic":
            return self._anthropic_exchange(body.get("messages") or [], bool(tools))
        return self._openai_exchange(body.get("messages") or [])

    @staticmethod
    def _anthropic_exchange(messages: list[dict[str, Any]], has_tools: bool) -> str | None:
        pending: set[str] = set()  # tool_use ids the next user turn must answer
        for message in messages:
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            kinds = {b.get("type") for b in blocks}
            if kinds & {"tool_use", "tool_result"} and not has_tools:
                return (
                    "Requests which include `tool_use` or `tool_result` blocks must define tools."
                )
            answered = {b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"}
            if answered != pending:
                return f"tool_result blocks {sorted(answered)} do not answer {sorted(pending)}"
            pending = {b["id"] for b in blocks if b.get("type") == "tool_use"}
        return "tool_use ids were never answered" if pending else None

    @staticmethod
    def _openai_exchange(messages: list[dict[str, Any]]) -> str | None:
        pending: set[str] = set()
        for message in messages:
            if message.get("role") == "tool":
                if message.get("tool_call_id") not in pending:
                    return "messages with role 'tool' must be a response to a preceding tool_calls"
                pending.discard(message["tool_call_id"])
                continue
            if pending:
                return (
                    "An assistant message with 'tool_calls' must be followed by tool messages "
                    "responding to each 'tool_call_id'."
                )
            pending = {c["id"] for c in message.get("tool_calls") or []}
        if pending:
            return "An assistant message with 'tool_calls' must be followed by tool messages."
        return None

    def _success(self, answer: Answer, model: str) -> dict[str, Any]:
        n = next(self._ids)
        if self.api == "anthropic":
            content: list[dict[str, Any]] = (
                [{"type": "text", "text": answer.text}]
                if answer.text or not answer.tool_calls
                else []
            )
            content += [
                {"type": "tool_use", "id": f"toolu_{n:04d}_{i}", "name": name, "input": arguments}
                for i, (name, arguments) in enumerate(answer.tool_calls)
            ]
            return {
                "id": f"msg_{n:04d}",
                "type": "message",
                "role": "assistant",
                "content": content,
                "model": model,
                "stop_reason": "tool_use" if answer.tool_calls else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": answer.tokens_in, "output_tokens": answer.tokens_out},
            }
        message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
        if answer.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{n:04d}_{i}",
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": arguments
                        if isinstance(arguments, str)
                        else json.dumps(arguments),
                    },
                }
                for i, (name, arguments) in enumerate(answer.tool_calls)
            ]
        elif message["content"] is None:
            message["content"] = ""
        return {
            "id": f"chatcmpl-{n:04d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if answer.tool_calls else "stop",
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
        if self.api == "google":
            word = _GOOGLE_ERRORS.get(status, "UNKNOWN")
            return {"error": {"code": status, "message": message, "status": word}}
        kind = _OPENAI_ERRORS.get(status, "server_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}


# --- Gemini's generateContent -----------------------------------------------------------------

#: What Gemini 3 puts on a function call part; a request must hand it back (see below).
SIGNATURE = "c2lnbmF0dXJl"  # base64 of b"signature"


def _google_success(answer: Answer, model: str, n: int) -> dict[str, Any]:
    parts: list[dict[str, Any]] = (
        [{"text": answer.text}] if answer.text or not answer.tool_calls else []
    )
    parts += [
        {
            "functionCall": {"id": f"fc_{n:04d}_{i}", "name": name, "args": arguments},
            "thoughtSignature": SIGNATURE,
        }
        for i, (name, arguments) in enumerate(answer.tool_calls)
    ]
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": answer.tokens_in,
            "candidatesTokenCount": answer.tokens_out,
            "totalTokenCount": answer.tokens_in + answer.tokens_out,
        },
        "modelVersion": model,
        "responseId": f"resp_{n:04d}",
    }


def _google_malformed(body: dict[str, Any]) -> str | None:
    """What Gemini would refuse: a bad function name, a role other than user/model, a function
    call turn not answered part for part (by name) in the next turn, or a call this server made
    sent back without its thought signature."""
    for tool in body.get("tools") or []:
        for declaration in tool.get("functionDeclarations") or []:
            name = declaration.get("name") or ""
            if not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}", name):
                return f"Invalid function name {name!r}"
    pending: list[str] = []
    for content in body.get("contents") or []:
        if content.get("role") not in ("user", "model"):
            return f"Please use a valid role: user, model (got {content.get('role')!r})"
        parts = content.get("parts") or []
        answered = [p["functionResponse"].get("name") for p in parts if "functionResponse" in p]
        if sorted(answered) != sorted(pending):
            return (
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn."
            )
        calls = [p for p in parts if "functionCall" in p]
        for call in calls:
            ours = str(call["functionCall"].get("id", "")).startswith("fc_")
            if ours and call.get("thoughtSignature") != SIGNATURE:
                return "Function call is missing a thought_signature in functionCall parts."
        pending = [c["functionCall"].get("name") for c in calls]
    return "A function call turn must be followed by its function responses." if pending else None
