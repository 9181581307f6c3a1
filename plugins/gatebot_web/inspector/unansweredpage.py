"""The Unanswered page: what the agent could not answer, grouped into suggested pack changes
(:func:`bot.unanswered.cluster_asked`), with a since filter. The same groups as
``gatebot unanswered``, against the running pack's passages."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import click
from aiohttp import web

from bot.cli.unanswered import LABELS, parse_since
from bot.extend.host import ChannelHost
from bot.extend.retriever import pack_passages
from bot.unanswered import Cluster, Passage, cluster_asked, gather
from gatebot_web.errors import ApiError
from gatebot_web.inspector import html
from gatebot_web.inspector.html import esc, url, when
from gatebot_web.inspector.routes import _html
from gatebot_web.inspector.sessions import Session

#: What the page shows when no since is given: a month keeps a large store's page quick.
DEFAULT_SINCE = "30d"
SHOWN = 50


def since_of(query: Any) -> tuple[str, datetime | None]:
    raw = str(query.get("since", DEFAULT_SINCE)).strip()[:40]
    if raw in ("", "all"):
        return "all", None
    try:
        return raw, parse_since(raw)
    except click.BadParameter as exc:
        raise ApiError(400, "bad_request", f"since: {exc.message}") from None


class UnansweredPage:
    def __init__(self, host: ChannelHost) -> None:
        self.host = host

    async def _clusters(self, since: datetime | None) -> tuple[list[Cluster], int]:
        asked = await self.host.read_store(gather, since)
        shelf = [Passage(f.key, f.title or "", f.text) for f in pack_passages(self.host.pack)]
        try:
            return await asyncio.to_thread(cluster_asked, asked, shelf), len(asked)
        except ImportError as exc:
            raise ApiError(
                503,
                "unavailable",
                f"grouping needs the encoder ({exc.name} is missing): "
                "pip install 'gatebot[embeddings]'",
            ) from None

    async def page(self, request: web.Request, session: Session) -> web.Response:
        shown_since, since = since_of(request.query)
        clusters, asked = await self._clusters(since)
        more = f" (the largest {SHOWN} shown)" if len(clusters) > SHOWN else ""
        body = (
            "<h1>Unanswered</h1>"
            + since_form(shown_since)
            + f"<p>{asked} unanswered question(s) and out-of-scope request(s), "
            f"{len(clusters)} group(s){more}.</p>" + cluster_table(clusters[:SHOWN])
        )
        return _html(html.page("Unanswered", body, session.csrf, session.staff))

    async def json(self, request: web.Request, session: Session) -> web.Response:
        _, since = since_of(request.query)
        clusters, asked = await self._clusters(since)
        return web.json_response(
            {
                "since": since.isoformat() if since else None,
                "asked": asked,
                "clusters": [c.as_dict() for c in clusters],
            }
        )


def since_form(since: str) -> str:
    return f"""<form class="filters" method="get" action="/inspector/unanswered">
<label>Since <input name="since" size="12" value="{esc(since)}"
 placeholder="7d, 24h, 2026-11-01 or all"></label>
<button type="submit">Show</button></form>"""


def cluster_table(clusters: list[Cluster]) -> str:
    if not clusters:
        return "<p>Nothing went unanswered in this window.</p>"
    head = (
        "<tr><th>#</th><th>count</th><th>kind</th><th>suggested question</th><th>examples</th>"
        "<th>nearest passage</th><th>unanswered / out of scope</th><th>last asked</th></tr>"
    )
    rows = "".join(_row(n, c) for n, c in enumerate(clusters, 1))
    return f'<table class="list unanswered">{head}{rows}</table>'


def _row(n: int, c: Cluster) -> str:
    examples = "".join(f"<li>{esc(e)}</li>" for e in c.examples)
    near = "—"
    if c.nearest:
        href = url("/inspector/passages", c.nearest["key"])
        near = (
            f'<a href="{esc(href)}">{esc(c.nearest["title"] or c.nearest["key"])}</a> '
            f"({esc(c.nearest['similarity'])})"
        )
    return (
        f'<tr class="cluster" data-kind="{esc(c.suggestion)}"><td>{n}</td><td>{c.count}</td>'
        f"<td>{esc(LABELS.get(c.suggestion, c.suggestion))}</td><td>{esc(c.question)}</td>"
        f"<td><ul>{examples}</ul></td><td>{near}</td>"
        f"<td>{c.kinds.get('unanswered', 0)} / {c.kinds.get('out_of_scope', 0)}</td>"
        f"<td>{when(c.last_seen)}</td></tr>"
    )
