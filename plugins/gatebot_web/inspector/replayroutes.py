"""The Replay page and its JSON: start a replay of stored conversations through a pack folder on
the server, poll it, read the report, download it as JSON (:mod:`replayjob` runs it)."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, time
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.errors import GatebotError, PackErrors
from bot.extend.host import ChannelHost
from bot.packs import load_pack
from bot.replay import LogError, LoggedConversation, from_store
from gatebot_web.errors import ApiError
from gatebot_web.inspector import html
from gatebot_web.inspector.replayjob import ReplayBusy, ReplayJob
from gatebot_web.inspector.replaypage import replay_page
from gatebot_web.inspector.routes import _body, _html
from gatebot_web.inspector.sessions import Session

MAX_IDS = 500


def _text(data: dict[str, Any], key: str, limit: int) -> str:
    value = data.get(key) or ""
    if not isinstance(value, str) or len(value) > limit or "\x00" in value:
        raise ApiError(400, "bad_request", f"{key} must be text of at most {limit} characters")
    return value.strip()


async def checked_pack(raw: str) -> Path:
    """The pack folder asked for, when it is a folder on this server that loads as a pack."""
    if not raw:
        raise ApiError(400, "bad_request", "say which pack folder to replay through")
    folder = Path(raw)
    if not await asyncio.to_thread(folder.is_dir):
        raise ApiError(400, "bad_request", f"{raw}: not a folder on the server")
    try:
        await asyncio.to_thread(load_pack, folder)
    except PackErrors as exc:
        shown = "; ".join(str(e) for e in exc.errors[:10])
        raise ApiError(400, "bad_pack", f"{raw} does not load as a pack: {shown}") from None
    except (GatebotError, OSError, ValueError) as exc:
        raise ApiError(400, "bad_pack", f"{raw} does not load as a pack: {exc}") from None
    return folder.resolve()


def selection(data: dict[str, Any]) -> tuple[datetime | None, list[str] | None, str]:
    """The log asked for: a since date, conversation ids, or both; and how to name it."""
    since_raw = _text(data, "since", 10)
    ids = [i for i in re.split(r"[\s,]+", _text(data, "conversations", 40_000)) if i]
    if len(ids) > MAX_IDS:
        raise ApiError(400, "bad_request", f"at most {MAX_IDS} conversation ids at a time")
    since = None
    if since_raw:
        try:
            since = datetime.combine(datetime.strptime(since_raw, "%Y-%m-%d").date(), time(), UTC)
        except ValueError:
            raise ApiError(400, "bad_request", "since must be a date like 2026-12-01") from None
    named = [f"since {since_raw}"] * bool(since) + [f"{len(ids)} conversation(s)"] * bool(ids)
    return since, ids or None, "stored conversations" + (f" ({', '.join(named)})" if named else "")


class ReplayPages:
    def __init__(self, host: ChannelHost, job: ReplayJob) -> None:
        self.host, self.job = host, job

    async def page(self, request: web.Request, session: Session) -> web.Response:
        report = self.job.report.as_dict() if self.job.report is not None else None
        body = replay_page(self.job.status(), report, self.job.pack or str(self.host.settings.pack))
        return _html(html.page("Replay", body, session.csrf, session.staff))

    async def status(self, request: web.Request, session: Session) -> web.Response:
        return web.json_response(self.job.status())

    async def start(self, request: web.Request, session: Session) -> web.Response:
        if self.job.running:
            raise ApiError(409, "busy", "a replay is already running here; wait for it to finish")
        data = await _body(request)
        pack = await checked_pack(_text(data, "pack", 1000))
        since, ids, source = selection(data)
        try:
            log: list[LoggedConversation] = await self.host.read_store(from_store, since, ids)
        except LogError as exc:
            raise ApiError(400, "bad_request", str(exc)) from None
        if not log:
            raise ApiError(400, "bad_request", f"no logged conversations in {source}")
        try:
            await self.job.start(log, pack, self.host.settings, source, session.staff)
        except ReplayBusy as exc:
            raise ApiError(409, "busy", str(exc)) from None
        return web.json_response(self.job.status(), status=202)

    async def report_json(self, request: web.Request, session: Session) -> web.Response:
        if self.job.report is None:
            raise ApiError(404, "not_found", "no finished replay in this process")
        resp = web.Response(text=self.job.report.to_json(), content_type="application/json")
        resp.headers["Content-Disposition"] = 'attachment; filename="replay-report.json"'
        resp.headers["Cache-Control"] = "no-store"
        return resp
