"""String templates for the inspector's pages. Every value from the store passes through
:func:`esc` (or :func:`pretty`) before it reaches the page: a customer's message is text, never
markup. Scripts come from /inspector/static only, so the Content-Security-Policy needs no change.
"""

from __future__ import annotations

import html
import json
from datetime import datetime
from typing import Any
from urllib.parse import quote

NAV = (
    ("/inspector", "Conversations"),
    ("/inspector/escalations", "Escalations"),
    ("/inspector/runs", "Flow runs"),
    ("/inspector/unanswered", "Unanswered"),
    ("/inspector/replay", "Replay"),
)


def esc(value: Any) -> str:
    """Text for the page: None shows as an em dash, everything else escaped."""
    return "—" if value is None else html.escape(str(value), quote=True)


def when(value: Any) -> str:
    """A stored time to the second, as stored (UTC); anything else escaped."""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return esc(value)


def pretty(value: Any) -> str:
    """A JSON value, indented, escaped for a <pre>."""
    return html.escape(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def url(path: str, *parts: Any) -> str:
    return path + "".join("/" + quote(str(p), safe="") for p in parts)


def number(value: Any, digits: int = 2) -> str:
    """A float from a record, rounded; anything else (a missing key) as it is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return esc(value)
    return f"{value:.{digits}f}"


def bar(value: Any, gate: Any, outcome: str = "") -> str:
    """A 0..1 value as a bar, with its gate as a mark across it. Non-numbers draw nothing."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return '<span class="bar none">no value</span>'
    width = max(0.0, min(1.0, float(value))) * 100
    mark = ""
    if isinstance(gate, int | float) and not isinstance(gate, bool):
        left = max(0.0, min(1.0, float(gate))) * 100
        mark = f'<span class="gate" style="left:{left:.1f}%" title="gate {number(gate)}"></span>'
    return (
        f'<span class="bar {esc(outcome)}"><span class="fill" style="width:{width:.1f}%"></span>'
        f"{mark}</span>"
    )


def page(title: str, body: str, csrf: str = "", staff: str = "") -> str:
    """The shell every inspector page shares."""
    nav = "".join(f'<a href="{href}">{esc(label)}</a>' for href, label in NAV)
    who = ""
    if staff:
        who = (
            f'<form method="post" action="/inspector/logout" class="logout">'
            f'<span class="who">{esc(staff)}</span>'
            f'<input type="hidden" name="csrf" value="{esc(csrf)}">'
            f'<button type="submit">Log out</button></form>'
        )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="{esc(csrf)}">
<title>{esc(title)} · gatebot inspector</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/inspector/static/inspector.css">
<script src="/inspector/static/inspector.js" defer></script>
</head><body>
<header><strong>gatebot inspector</strong><nav>{nav if staff else ""}</nav>{who}</header>
<main>{body}</main>
</body></html>"""


def login_form(error: str | None = None, after: str = "/inspector") -> str:
    shown = f'<p class="error" role="alert">{esc(error)}</p>' if error else ""
    return page(
        "Log in",
        f"""<h1>Staff log in</h1>{shown}
<form method="post" action="/inspector/login" class="login">
<input type="hidden" name="next" value="{esc(after)}">
<label>Your name <input name="staff" required maxlength="80" autocomplete="username"></label>
<label>Admin token <input name="token" type="password" required autocomplete="current-password">
</label>
<button type="submit">Log in</button>
</form>
<p class="hint">The token is GATEBOT_ADMIN_TOKEN. It is sent once, in this form's body, and
never kept in the browser: a session cookie stands for it.</p>""",
    )


def json_block(value: Any, label: str = "JSON") -> str:
    """A value folded away, for details few people need on every turn."""
    return f"<details><summary>{esc(label)}</summary><pre>{pretty(value)}</pre></details>"
