"""Reading a request from a stranger: its body, its bearer token, its path ids and its fields,
each within bounds, so bad input is a 4xx naming the problem and never a 5xx.

The body is read once, decompressed by aiohttp (a corrupt ``Content-Encoding`` body is a 400) and
parsed by :mod:`bot.safejson` (bounded depth, numbers and strings). A header is decoded by aiohttp
with ``surrogateescape``, so bytes that are not UTF-8 arrive as lone surrogates: a token holding one
is no token (401). A path id holding anything an id never holds (a NUL, which PostgreSQL cannot
store, or a slash) names nothing (404).
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError

from bot import safejson
from bot.identity import verify
from bot.packs.context import SOURCES, page_fields
from gatebot_web.errors import ApiError

#: What an id in a path may hold: conversation ids and tokens are hex or URL-safe base64.
_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
#: A language tag: "en", "pt-BR", "zh-Hant".
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})?")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


async def json_body(request: web.Request) -> dict[str, Any]:
    """The body as a JSON object (an empty body is ``{}``), or a 400 saying what is wrong."""
    try:
        raw = await request.read()
    except RequestPayloadError:
        # aiohttp could not decompress it (a corrupt deflate or gzip stream). The rest of the
        # stream is unreadable, so the connection ends with this answer.
        raise ApiError(
            400,
            "bad_body",
            "the body could not be decoded as its Content-Encoding says",
            {"Connection": "close"},
        ) from None
    if not raw.strip():
        return {}
    try:
        body = safejson.loads(raw)
    except safejson.BadJson as exc:
        raise ApiError(400, "bad_json", str(exc)) from None
    if not isinstance(body, dict):
        raise ApiError(400, "bad_json", "body must be a JSON object")
    return body


def token(value: str | None) -> str | None:
    """A credential as sent, or None when it cannot be one: empty, or holding bytes that were not
    UTF-8 (lone surrogates), a control character or a space."""
    if not value or _CONTROL.search(value) or " " in value:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def bearer(request: web.Request) -> str | None:
    """The ``Authorization: Bearer`` token, or None (then the caller answers 401)."""
    header = request.headers.get("Authorization", "")
    scheme, _, given = header.partition(" ")
    return token(given.strip()) if scheme.lower() == "bearer" else None


def path_id(request: web.Request, name: str = "id") -> str:
    """A path's id, or a 404: an id with characters no id has names nothing."""
    value = request.match_info.get(name, "")
    if not _ID.fullmatch(value):
        raise ApiError(404, "not_found", f"no such {name.replace('_', ' ')}")
    return value


def language(body: dict[str, Any], default: str) -> str:
    """``language`` from a body: absent means ``default``; present, a language tag."""
    if "language" not in body:
        return default
    value = body["language"]
    if not isinstance(value, str) or not _LANGUAGE.fullmatch(value):
        raise ApiError(400, "bad_request", "language must be a language code like 'en' or 'pt-BR'")
    return value


def identity(body: dict[str, Any], secret: str | None) -> str | None:
    """The verified ``user_id`` of a body carrying ``user_id`` and ``user_hash`` (None when it
    carries neither). A missing half, a wrong hash or no secret configured is 401: a claimed
    identity the bot cannot check must not open a conversation as anyone."""
    if "user_id" not in body and "user_hash" not in body:
        return None
    user_id, user_hash = body.get("user_id"), body.get("user_hash")
    if (
        not isinstance(user_id, str)
        or not isinstance(user_hash, str)
        or _CONTROL.search(user_id)
        or not verify(secret, user_id, user_hash)
    ):
        raise ApiError(401, "unauthorized", "user_hash does not sign user_id")
    return user_id


def client_message_id(body: dict[str, Any], limit: int) -> str:
    """``client_message_id``: 1 to ``limit`` characters, not blank, no control characters."""
    value = body.get("client_message_id")
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > limit
        or _CONTROL.search(value)
    ):
        raise ApiError(
            400,
            "bad_request",
            f"client_message_id is required: a string of 1-{limit} visible characters",
        )
    return value


def text(body: dict[str, Any], field: str = "text") -> str:
    """A required non-blank string field."""
    value = body.get(field)
    if not isinstance(value, str) or not value.strip():
        raise ApiError(400, "bad_request", f"{field} is required and must be a non-empty string")
    return value


def site_context(body: dict[str, Any]) -> tuple[str, dict[str, str] | None]:
    """``{"consent": "visitor" | "site" | "declined", "url", "title", "referrer"}``: who consented
    (or that the visitor refused, then no page is taken) and the page. A 400 names what is wrong."""
    consent = body.get("consent")
    if consent == "declined":
        if any(body.get(k) for k in ("url", "title", "referrer")):
            raise ApiError(400, "bad_context", "a refused consent sends no page")
        return "visitor", None
    if consent not in SOURCES:
        raise ApiError(400, "bad_context", "consent must be 'visitor', 'site' or 'declined'")
    try:
        return str(consent), page_fields(body)
    except ValueError as exc:
        raise ApiError(400, "bad_context", str(exc)) from None
