"""JSON from an untrusted sender, parsed within bounds: a problem is a :class:`BadJson` naming it,
never a RecursionError, a 4,300-digit integer or a string a database cannot store.

Bounds: the bytes are UTF-8; nesting at most :data:`MAX_DEPTH` deep; integers of at most
:data:`MAX_INT_DIGITS` digits; finite floats (no NaN, no Infinity); every string and key
well-formed Unicode (no lone surrogate from a ``\\ud800`` escape) without NUL. The size is the
caller's to bound (the web server refuses a body over its limit before reading it).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 32
MAX_INT_DIGITS = 18
_SURROGATE = re.compile("[\ud800-\udfff]")


class BadJson(ValueError):
    """What is wrong with a body, in words a client can act on."""


def loads(raw: bytes | str) -> Any:
    """The JSON value of ``raw``, or :class:`BadJson` saying why there is none."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadJson(f"body is not UTF-8 (byte {exc.start})") from None
    depth = nesting(raw)
    if depth > MAX_DEPTH:
        raise BadJson(f"JSON is nested {depth} levels deep; the limit is {MAX_DEPTH}")
    try:
        value = json.loads(raw, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise BadJson(f"body is not valid JSON: {exc}") from None
    check_strings(value)
    return value


def nesting(text: str) -> int:
    """How deep ``text``'s arrays and objects nest (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def check_strings(value: Any, where: str = "body") -> None:
    """Refuse a lone surrogate or a NUL in any string or key of ``value`` (already bounded in
    depth by :func:`loads`)."""
    if isinstance(value, str):
        if "\x00" in value:
            raise BadJson(f"{where} contains a NUL character")
        if _SURROGATE.search(value):
            raise BadJson(f"{where} is not well-formed Unicode (a lone surrogate)")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_strings(key, f"a key of {where}")
            check_strings(item, f"{where}.{key}"[:80])
    elif isinstance(value, list):
        for n, item in enumerate(value):
            check_strings(item, f"{where}[{n}]"[:80])


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BadJson(f"a number has {len(text)} digits; the limit is {MAX_INT_DIGITS}")
    return int(text)


def _float(text: str) -> float:
    if len(text) > 64:
        raise BadJson("a number is longer than 64 characters")
    number = float(text)
    if not math.isfinite(number):
        raise BadJson("a number is out of range")
    return number


def _constant(name: str) -> Any:
    raise BadJson(f"{name} is not JSON")
