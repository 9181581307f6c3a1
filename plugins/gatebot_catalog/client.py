"""Sending a prepared request (aiohttp), with the credential added at the last moment.

The credential is read from the environment at call time and exists only in the outgoing headers:
it is never in a result, an error, a log line or a tool event, and any echo of it in a response is
redacted before anyone reads the response. Redirects are not followed (one could name another
host). Whole response bodies are kept for windowed reading, never cut silently.
"""

from __future__ import annotations

import json
import os
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import aiohttp
import yarl

from bot.extend.tool import WINDOW_CHARS, ToolError, window
from gatebot_catalog.spec import Api, Endpoint
from gatebot_catalog.urls import PreparedRequest

#: A response larger than this fails honestly instead of being kept.
MAX_BODY_BYTES = 5 * 1024 * 1024
REDACTED = "[redacted]"
#: How many whole responses stay readable by ``catalog.read_result`` (oldest dropped first).
KEEP_RESULTS = 256


class MissingCredential(ToolError):
    """The variable an API's credential lives in is not set."""


def credential(api: Api) -> str | None:
    """The API's credential value, read now; None when it has no auth. Never logged."""
    if api.auth is None:
        return None
    value = os.environ.get(api.auth.env) or api.auth.demo_default
    if not value:
        raise MissingCredential(f"{api.name}: the credential variable {api.auth.env} is not set")
    return value


def redact(text: str, secret: str | None) -> str:
    return text.replace(secret, REDACTED) if secret else text


@dataclass
class StoredResult:
    text: str
    conversation_id: str | None


class ResultStore:
    """Whole responses by an unguessable id, so a long one is read window by window."""

    def __init__(self, keep: int = KEEP_RESULTS) -> None:
        self.keep = keep
        self._items: OrderedDict[str, StoredResult] = OrderedDict()

    def put(self, text: str, conversation_id: str | None) -> str:
        result_id = "r_" + secrets.token_hex(8)
        self._items[result_id] = StoredResult(text, conversation_id)
        while len(self._items) > self.keep:
            self._items.popitem(last=False)
        return result_id

    def get(self, result_id: str, conversation_id: str | None) -> StoredResult | None:
        item = self._items.get(result_id)
        # One conversation never reads another's results.
        if item is None or item.conversation_id != conversation_id:
            return None
        return item


class CatalogClient:
    def __init__(self, results: ResultStore | None = None) -> None:
        self.results = results or ResultStore()
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # No cookie jar: one conversation's cookies must never ride along with another's.
            self._session = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(
        self,
        api: Api,
        endpoint: Endpoint,
        request: PreparedRequest,
        conversation_id: str | None = None,
    ) -> dict[str, Any]:
        """Send ``request`` and return the tool result; :class:`ToolError` for an HTTP error,
        a redirect, an unreachable service or an oversized answer."""
        secret = credential(api)
        headers = dict(request.headers)
        if secret is not None and api.auth is not None:
            value = f"Bearer {secret}" if api.auth.type == "bearer" else secret
            headers[api.auth.header] = value
        label = f"{api.name}.{endpoint.id}"
        try:
            async with self._client().request(
                request.method,
                # Sent byte for byte as built and checked: no re-quoting or normalising on the way.
                yarl.URL(request.url, encoded=True),
                json=request.json,
                headers=headers,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=endpoint.timeout_s),
            ) as resp:
                raw = await resp.content.read(MAX_BODY_BYTES + 1)
                status = resp.status
        except TimeoutError:
            raise ToolError(f"{label} did not answer within {endpoint.timeout_s:g} s") from None
        except aiohttp.ClientError as exc:
            # The exception text can carry the URL but never a header: no credential in it.
            raise ToolError(f"{label} could not be reached: {type(exc).__name__}") from None
        if len(raw) > MAX_BODY_BYTES:
            raise ToolError(f"{label} answered more than {MAX_BODY_BYTES} bytes; not kept")
        text = redact(raw.decode("utf-8", errors="replace"), secret)
        if 300 <= status < 400:
            raise ToolError(f"{label} answered a redirect (HTTP {status}), which is not followed")
        if status >= 400:
            raise ToolError(f"{label} answered HTTP {status}: {_error_text(text)}")
        return self._result(label, status, text, conversation_id)

    def _result(
        self, label: str, status: int, text: str, conversation_id: str | None
    ) -> dict[str, Any]:
        result_id = self.results.put(text, conversation_id)
        first = window(text, 0, WINDOW_CHARS)
        complete = first["length"] == first["total"]
        try:
            data = json.loads(text) if complete and text.strip() else None
        except ValueError:
            data = None
        note = f"{label}: HTTP {status}, {len(text)} characters"
        if not complete:
            note += f"; showing 0-{first['length']}, read the rest with catalog.read_result"
        result: dict[str, Any] = {
            "http_status": status,
            "result_id": result_id,
            "total": first["total"],
            "complete": complete,
            "data": data,
            "note": note,
        }
        if data is None:  # not JSON, or not all of it here: the first window of the raw text
            result["window"] = first
        elif isinstance(data, dict):
            # A JSON object's fields also sit at the top, where flows read them (``fills``,
            # routes); the catalog's own keys win a clash, and ``data`` keeps the answer whole.
            for key, value in data.items():
                result.setdefault(key, value)
        return result


def _error_text(text: str, limit: int = 300) -> str:
    """The service's own words for an error (its JSON message when it has one), briefly."""
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"][:limit]
        if isinstance(error, str):
            return error[:limit]
    text = text.strip()
    return (text[:limit] + "...") if len(text) > limit else (text or "no body")
