"""The inspector's pages and their JSON, each behind a staff session (see ``auth``).

Writes go through what already exists: escalation actions through the help desks' one ``act``
(so a reply reaches the customer on the customer's channel), rewind and fork through
:mod:`bot.flows.service`.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

from aiohttp import web

from bot.extend.host import ChannelHost
from bot.flows import service
from bot.helpdesk import VERBS, HelpDeskError, UnknownEscalation, describe
from bot.outcomes import KINDS, NotFound, OutcomeError
from bot.outcomes.labels import label_choices, label_json
from bot.store.inspect import (
    PER_PAGE,
    ConversationFilter,
    channels,
    dossier,
    escalation_queue,
    find_conversations,
    passages,
    recent_runs,
    run_with_checkpoints,
)
from gatebot_web import inputs
from gatebot_web.errors import ApiError
from gatebot_web.inspector import export, html, pages
from gatebot_web.inspector.graph import run_page_body, runs_table
from gatebot_web.inspector.sessions import Session

MAX_JSON = 64 * 1024


def _html(text: str) -> web.Response:
    resp = web.Response(text=text, content_type="text/html", charset="utf-8")
    resp.headers["Cache-Control"] = "no-store"
    return resp


def _day(query: dict[str, str], key: str) -> date | None:
    raw = query.get(key, "").strip()
    if not raw:
        return None
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise ApiError(400, "bad_request", f"{key} must be a date like 2026-12-01") from None


def parse_filter(query: dict[str, str]) -> tuple[ConversationFilter, int]:
    """The list's filter and page from the query string; a bad date or page is a 400."""
    page = query.get("page", "1")
    if not re.fullmatch(r"[0-9]{1,6}", page) or int(page) < 1:
        raise ApiError(400, "bad_request", "page must be a positive whole number")
    return (
        ConversationFilter(
            channel=query.get("channel") or None,
            escalated=bool(query.get("escalated")),
            unsure=bool(query.get("unsure")),
            refused=bool(query.get("refused")),
            outcome=query.get("outcome") or None,
            status=query.get("status") or None,
            since=_day(query, "since"),
            until=_day(query, "until"),
            text=query.get("q") or None,
        ),
        int(page),
    )


class Pages:
    def __init__(self, host: ChannelHost) -> None:
        self.host = host

    def _page(self, title: str, body: str, session: Session) -> web.Response:
        return _html(html.page(title, body, session.csrf, session.staff))

    async def _listing(self, request: web.Request) -> tuple[dict[str, str], Any, int, int]:
        query = dict(request.query)
        f, page = parse_filter(query)
        rows, total = await self.host.read_store(find_conversations, f, page, PER_PAGE)
        return query, rows, total, page

    async def conversations(self, request: web.Request, session: Session) -> web.Response:
        query, rows, total, page = await self._listing(request)
        known = await self.host.read_store(channels)
        body = (
            "<h1>Conversations</h1>"
            + pages.filter_form(query, known)
            + pages.conversation_list(rows, total, page, PER_PAGE, query)
        )
        return self._page("Conversations", body, session)

    async def conversations_json(self, request: web.Request, session: Session) -> web.Response:
        _, rows, total, page = await self._listing(request)
        return web.json_response(
            {"total": total, "page": page, "conversations": [export.row_json(r) for r in rows]}
        )

    async def _dossier(self, request: web.Request) -> Any:
        found = await self.host.read_store(dossier, inputs.path_id(request))
        if found is None:
            raise ApiError(404, "not_found", "no such conversation")
        return found

    async def conversation(self, request: web.Request, session: Session) -> web.Response:
        d = await self._dossier(request)
        body = pages.conversation_page(d, label_choices(self.host.pack))
        return self._page(f"Conversation {d.conversation.id}", body, session)

    async def export(self, request: web.Request, session: Session) -> web.Response:
        d = await self._dossier(request)
        text = json.dumps(export.dossier_json(d), indent=2, ensure_ascii=False, default=str)
        resp = web.Response(text=text, content_type="application/json", charset="utf-8")
        name = f"conversation-{d.conversation.id}.json"
        resp.headers["Content-Disposition"] = f'attachment; filename="{name}"'
        resp.headers["Cache-Control"] = "no-store"
        return resp

    async def passage(self, request: web.Request, session: Session) -> web.Response:
        key = request.match_info["key"]
        found = await self.host.read_store(passages, key[:255])
        return self._page(f"Passage {key}", pages.passage_page(key, found), session)

    async def escalations(self, request: web.Request, session: Session) -> web.Response:
        every = bool(request.query.get("all"))
        rows = await self.host.read_store(escalation_queue, not every)
        switch = (
            '<a href="/inspector/escalations">waiting only</a>'
            if every
            else '<a href="/inspector/escalations?all=1">show all</a>'
        )
        body = f"<h1>Escalations</h1><p>{switch}</p>{pages.escalation_rows(rows)}"
        return self._page("Escalations", body, session)

    async def runs(self, request: web.Request, session: Session) -> web.Response:
        found = await self.host.read_store(recent_runs)
        return self._page("Flow runs", "<h1>Flow runs</h1>" + runs_table(found), session)

    async def run(self, request: web.Request, session: Session) -> web.Response:
        run, cps = await self.host.read_store(run_with_checkpoints, inputs.path_id(request))
        if run is None:
            raise ApiError(404, "not_found", "no such flow run")
        body = run_page_body(run, self.host.pack.flows.get(run.flow), cps)
        return self._page(f"Flow run {run.id}", body, session)


async def _body(request: web.Request) -> dict[str, Any]:
    if (request.content_length or 0) > MAX_JSON:
        raise ApiError(413, "too_large", "the request body is too large")
    try:
        data = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ApiError(400, "bad_request", "the body must be JSON") from None
    if not isinstance(data, dict):
        raise ApiError(400, "bad_request", "the body must be a JSON object")
    return data


def _op_error(exc: service.FlowOpError) -> ApiError:
    code = {400: "bad_request", 404: "not_found", 409: "conflict"}.get(exc.status, "error")
    return ApiError(exc.status, code, str(exc))


class Actions:
    """The inspector's writes, as JSON for inspector.js."""

    def __init__(self, host: ChannelHost) -> None:
        self.host = host

    async def escalation(self, request: web.Request, session: Session) -> web.Response:
        verb, raw_id = request.match_info["verb"], request.match_info["id"]
        if verb not in VERBS or not re.fullmatch(r"[0-9]{1,12}", raw_id):
            raise ApiError(404, "not_found", f"no such action; actions: {', '.join(VERBS)}")
        data = await _body(request)
        text, outcome = data.get("text", ""), data.get("outcome") or "resolved"
        if not isinstance(text, str) or not isinstance(outcome, str):
            raise ApiError(400, "bad_request", "text and outcome must be strings")
        if verb == "reply" and not text.strip():
            raise ApiError(400, "bad_request", "a reply needs text")
        if verb == "resolve" and outcome not in KINDS:
            raise ApiError(400, "bad_request", f"outcome must be one of {', '.join(KINDS)}")
        try:
            acted = await self.host.act(
                verb, int(raw_id), session.staff, trusted=True, text=text, outcome=outcome
            )
        except UnknownEscalation as exc:
            raise ApiError(404, "not_found", str(exc)) from None
        except HelpDeskError as exc:
            raise ApiError(409, "conflict", str(exc)) from None
        return web.json_response(describe(acted))

    async def label(self, request: web.Request, session: Session) -> web.Response:
        """``{"intent": NAME | "none"}``: the session's staff confirm or correct a turn's intent
        (who labelled it is the session's, never the body's word)."""
        raw_id = request.match_info["id"]
        if not re.fullmatch(r"[0-9]{1,12}", raw_id):
            raise ApiError(404, "not_found", "no such turn")
        data = await _body(request)
        if set(data) - {"intent"}:
            raise ApiError(400, "bad_request", "the body takes only intent")
        try:
            label, turn = await self.host.label_turn(
                int(raw_id), {"intent": data.get("intent"), "staff": session.staff}
            )
        except OutcomeError as exc:
            raise ApiError(400, "bad_request", str(exc)) from None
        except NotFound as exc:
            raise ApiError(404, "not_found", str(exc)) from None
        return web.json_response(label_json(label, turn))

    async def rewind(self, request: web.Request, session: Session) -> web.Response:
        data = await _body(request)
        index = data.get("at_checkpoint")
        if not isinstance(index, int) or isinstance(index, bool):
            raise ApiError(400, "bad_request", "at_checkpoint must be an integer index")
        try:
            found = await self.host.rewind_flow(service.rewind, inputs.path_id(request), index)
        except service.FlowOpError as exc:
            raise _op_error(exc) from None
        return web.json_response(service.checkpoint_json(found))

    async def fork(self, request: web.Request, session: Session) -> web.Response:
        data = await _body(request)
        index, output = data.get("at_checkpoint"), data.get("output")
        allow = data.get("allow_side_effects", False)
        if not isinstance(index, int) or isinstance(index, bool):
            raise ApiError(400, "bad_request", "at_checkpoint must be an integer index")
        if output is not None and not isinstance(output, dict):
            raise ApiError(400, "bad_request", "output must be a JSON object")
        if not isinstance(allow, bool):
            raise ApiError(400, "bad_request", "allow_side_effects must be true or false")
        try:
            run, copies = await self.host.fork_flow(
                service.fork,
                inputs.path_id(request),
                at_checkpoint=index,
                output=output,
                allow_side_effects=allow,
            )
        except service.FlowOpError as exc:
            raise _op_error(exc) from None
        return web.json_response(
            {"run": service.run_json(run), "checkpoints": len(copies)}, status=201
        )
