"""Building a request from the catalog, and refusing one that could go anywhere else.

The runtime, never the model, builds the URL: the base URL is the catalog's, each path value fills
exactly one segment, only declared query and body parameters pass, and no header comes from the
arguments. Anything that could move the request to another host, another path or another header
is refused here, before a socket is opened.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from bot.errors import GatebotError
from gatebot_catalog.spec import Api, Endpoint


class Refused(GatebotError):
    """A call the catalog does not allow; nothing was sent."""


#: Substrings that could add a segment, climb a level, name another host or start a new header
#: line, checked case-insensitively on every path value. A "%" is refused outright, so no value
#: can smuggle an encoded slash (or an encoded "%") past this list.
_FORBIDDEN_IN_PATH = ("..", "/", "\\", "%", "@", "://", "?", "#", ";")


@dataclass(frozen=True)
class PreparedRequest:
    method: str
    url: str
    json: dict[str, Any] | None = None
    #: Headers the runtime sets; the credential is added by the client at send time.
    headers: dict[str, str] = field(default_factory=dict)


def base_url(api: Api) -> str:
    """The API's base URL: the deployment's override (``base_url_env``) or the catalog's."""
    override = os.environ.get(api.base_url_env, "") if api.base_url_env else ""
    if override:
        parts = urlsplit(override)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.username:
            raise Refused(f"{api.base_url_env} is not an http(s)://host[:port][/path] URL")
    return (override or api.base_url).rstrip("/")


def _scalar(name: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise Refused(f"{name} must be a string or a number")
    text = str(value)
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise Refused(f"{name} contains a control character (CR, LF or similar)")
    return text


def path_value(name: str, value: Any) -> str:
    """One path segment, percent-encoded; refused if it could be more than one segment."""
    text = _scalar(name, value)
    if text in ("", "."):
        raise Refused(f"{name} is empty")
    lowered = text.lower()
    for bad in _FORBIDDEN_IN_PATH:
        if bad in lowered:
            raise Refused(f"{name} contains {bad!r}, which could change the request's target")
    return quote(text, safe="")


def prepare(api: Api, endpoint: Endpoint, arguments: dict[str, Any]) -> PreparedRequest:
    """The request for ``endpoint`` with ``arguments``, or :class:`Refused` with the reason."""
    unknown = sorted(set(arguments) - set(endpoint.params))
    if unknown:
        raise Refused(f"{api.name}.{endpoint.id} declares no parameter {unknown[0]!r}")
    missing = sorted(n for n, p in endpoint.params.items() if p.required and n not in arguments)
    if missing:
        raise Refused(f"{api.name}.{endpoint.id} needs {missing[0]!r}")
    segments = []
    for segment in endpoint.path.strip("/").split("/"):
        if segment.startswith("{") and segment.endswith("}"):
            name = segment[1:-1]
            segments.append(path_value(name, arguments[name]))
        elif segment:
            segments.append(segment)
    base = base_url(api)
    url = base + "/" + "/".join(segments)
    query = {
        n: _scalar(n, arguments[n])
        for n, p in endpoint.params.items()
        if p.where == "query" and n in arguments
    }
    if query:
        url += "?" + urlencode(query)
    body = {
        n: arguments[n] for n, p in endpoint.params.items() if p.where == "body" and n in arguments
    }
    _same_origin(base, url)
    return PreparedRequest(
        method=endpoint.method,
        url=url,
        json=body if endpoint.method != "GET" else None,
        headers={"Accept": "application/json"},
    )


def _same_origin(base: str, url: str) -> None:
    """Defence in depth: the built URL must still be under the base URL, same scheme, host and
    port, whatever the checks above let through."""
    want, got = urlsplit(base), urlsplit(url)
    same = (
        got.scheme == want.scheme
        and got.hostname == want.hostname
        and got.port == want.port
        and not got.username
        and not got.password
        and (got.path == want.path or got.path.startswith(want.path.rstrip("/") + "/"))
        and ".." not in got.path.split("/")
    )
    if not same:
        raise Refused("the built URL left the API's declared base URL")
