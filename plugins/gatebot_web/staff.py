"""The staff REST API: flows (list and show flows, runs and their checkpoints, and fork),
help-desk actions on escalations (take over, reply, hand back, resolve with an outcome), and the
labels heads learn from (outcomes from a CRM or billing webhook, staff's reading of a turn).

Every route needs ``Authorization: Bearer $GATEBOT_ADMIN_TOKEN``. A customer's conversation token
is a different secret and never opens it. With no admin token configured the staff API is off:
each route answers 403 saying so. The admin token stands in for help-desk membership, so an
escalation action here is not checked against a desk's channel.
"""

from __future__ import annotations

import hmac
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot.extend.host import ChannelHost
from bot.flows import service
from bot.helpdesk import VERBS, HelpDeskError, UnknownEscalation, describe
from bot.outcomes import NotFound, OutcomeError
from bot.outcomes.labels import label_json, outcome_json
from gatebot_web import inputs
from gatebot_web.errors import ApiError

Bearer = Callable[[web.Request], str | None]
Body = Callable[[web.Request], Awaitable[dict[str, Any]]]


def admin_token(host: ChannelHost) -> str | None:
    return host.settings.admin_token or os.environ.get("GATEBOT_ADMIN_TOKEN") or None


def _op_error(exc: service.FlowOpError) -> ApiError:
    code = {400: "bad_request", 404: "not_found", 409: "conflict"}.get(exc.status, "error")
    return ApiError(exc.status, code, str(exc))


def _fork_args(data: dict[str, Any]) -> dict[str, Any]:
    """The fork's keywords from the request body, each checked; a bad one is a 400."""
    at_step, at_cp = data.get("at_step"), data.get("at_checkpoint")
    if (at_step is None) == (at_cp is None):
        raise ApiError(400, "bad_request", "give exactly one of at_step or at_checkpoint")
    if at_step is not None and not isinstance(at_step, str):
        raise ApiError(400, "bad_request", "at_step must be a step id")
    if at_cp is not None and (not isinstance(at_cp, int) or isinstance(at_cp, bool)):
        raise ApiError(400, "bad_request", "at_checkpoint must be an integer index")
    output, allow = data.get("output"), data.get("allow_side_effects", False)
    if output is not None and not isinstance(output, dict):
        raise ApiError(400, "bad_request", "output must be a JSON object")
    if not isinstance(allow, bool):
        raise ApiError(400, "bad_request", "allow_side_effects must be true or false")
    return {
        "at_step": at_step,
        "at_checkpoint": at_cp,
        "output": output,
        "allow_side_effects": allow,
    }


def _action_args(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(staff, act's keywords) from an escalation action's body."""
    staff, text, outcome = data.get("staff"), data.get("text", ""), data.get("outcome", "resolved")
    name = data.get("name")
    if not isinstance(staff, str) or not staff.strip():
        raise ApiError(400, "bad_request", "staff is required: who is acting")
    if not isinstance(text, str) or not isinstance(outcome, str):
        raise ApiError(400, "bad_request", "text and outcome must be strings")
    if name is not None and not isinstance(name, str):
        raise ApiError(400, "bad_request", "name must be a string: the staff member's name")
    # Who acts here is a person's own word for themselves: their name unless another is given.
    return staff.strip(), {"text": text, "outcome": outcome, "staff_name": name or staff.strip()}


class StaffRoutes:
    """The handlers, over the host; ``bearer`` and ``body`` are the server's own helpers."""

    def __init__(self, host: ChannelHost, bearer: Bearer, body: Body) -> None:
        self.host, self.bearer, self.body = host, bearer, body

    def authorise(self, request: web.Request) -> None:
        expected = admin_token(self.host)
        if not expected:
            raise ApiError(
                403, "staff_api_off", "the staff API is off: set GATEBOT_ADMIN_TOKEN to turn it on"
            )
        given = self.bearer(request)
        if not given or not hmac.compare_digest(given.encode(), expected.encode()):
            raise ApiError(401, "unauthorized", "missing or wrong staff token")

    async def flows(self, request: web.Request) -> web.Response:
        self.authorise(request)
        disabled = self.host.disabled_flows()
        rows = [
            service.describe_flow(f, disabled.get(f.name))
            for f in sorted(self.host.pack.flows.values(), key=lambda f: f.name)
        ]
        return web.json_response({"flows": rows})

    async def flow(self, request: web.Request) -> web.Response:
        self.authorise(request)
        found = self.host.pack.flows.get(request.match_info["name"])
        if found is None:
            raise ApiError(404, "not_found", "no such flow")
        why = self.host.disabled_flows().get(found.name)
        return web.json_response(service.show_flow(found, why))

    async def runs(self, request: web.Request) -> web.Response:
        self.authorise(request)
        conversation = request.query.get("conversation") or None
        if conversation is not None and inputs.token(conversation) is None:
            raise ApiError(400, "bad_request", "conversation must be a conversation id")
        found = await self.host.load_flow_runs(conversation)
        return web.json_response({"runs": [service.run_json(r) for r in found]})

    async def checkpoints(self, request: web.Request) -> web.Response:
        self.authorise(request)
        run = await self.host.load_flow_run(inputs.path_id(request))
        if run is None:
            raise ApiError(404, "not_found", "no such flow run")
        cps = await self.host.load_checkpoints(run.id)
        return web.json_response(
            {"run": service.run_json(run), "checkpoints": [service.checkpoint_json(c) for c in cps]}
        )

    async def fork(self, request: web.Request) -> web.Response:
        self.authorise(request)
        args = _fork_args(await self.body(request))
        try:
            run, copies = await self.host.fork_flow(service.fork, inputs.path_id(request), **args)
        except service.FlowOpError as exc:
            raise _op_error(exc) from None
        checkpoints = [service.checkpoint_json(c) for c in copies]
        return web.json_response(
            {"run": service.run_json(run), "checkpoints": checkpoints}, status=201
        )

    async def escalation_action(self, request: web.Request) -> web.Response:
        """``POST /api/staff/escalations/{id}/{verb}`` with ``{"staff", "text"?, "outcome"?,
        "name"?}`` (``name``: how the customer sees a reply's author; ``staff`` when absent)."""
        self.authorise(request)
        verb, raw_id = request.match_info["verb"], request.match_info["id"]
        # ASCII digits only ("²" is a digit to str.isdigit), and few enough for a database id.
        if verb not in VERBS or not re.fullmatch(r"[0-9]{1,12}", raw_id):
            raise ApiError(404, "not_found", f"no such action; actions: {', '.join(VERBS)}")
        staff, kw = _action_args(await self.body(request))
        if verb == "reply" and not kw["text"].strip():
            raise ApiError(400, "bad_request", "a reply needs text")
        try:
            acted = await self.host.act(verb, int(raw_id), staff, trusted=True, **kw)
        except UnknownEscalation as exc:
            raise ApiError(404, "not_found", str(exc)) from None
        except HelpDeskError as exc:
            raise ApiError(409, "conflict", str(exc)) from None
        return web.json_response(describe(acted))


class OutcomeRoutes:
    """``POST /api/outcomes`` (a CRM or billing webhook) and ``POST /api/turns/{id}/label``
    (staff confirming or correcting a turn's intent): the labels heads are scored against."""

    def __init__(self, staff: StaffRoutes) -> None:
        self.staff = staff

    async def outcome(self, request: web.Request) -> web.Response:
        self.staff.authorise(request)
        data = await self.staff.body(request)
        try:
            row, duplicate = await self.staff.host.record_outcome(data)
        except OutcomeError as exc:
            raise ApiError(400, "bad_request", str(exc)) from None
        except NotFound as exc:
            raise ApiError(404, "not_found", str(exc)) from None
        return web.json_response(outcome_json(row, duplicate), status=200 if duplicate else 201)

    async def label(self, request: web.Request) -> web.Response:
        self.staff.authorise(request)
        raw_id = request.match_info["id"]
        if not re.fullmatch(r"[0-9]{1,12}", raw_id):
            raise ApiError(404, "not_found", "no such turn")
        data = await self.staff.body(request)
        try:
            label, turn = await self.staff.host.label_turn(int(raw_id), data)
        except OutcomeError as exc:
            raise ApiError(400, "bad_request", str(exc)) from None
        except NotFound as exc:
            raise ApiError(404, "not_found", str(exc)) from None
        return web.json_response(label_json(label, turn))


def add_staff_routes(app: web.Application, host: ChannelHost, bearer: Bearer, body: Body) -> None:
    """Wire the staff routes onto the web server's ``app``."""
    routes = StaffRoutes(host, bearer, body)
    app.router.add_get("/api/staff/flows", routes.flows)
    app.router.add_get("/api/staff/flows/{name}", routes.flow)
    app.router.add_get("/api/staff/runs", routes.runs)
    app.router.add_get("/api/staff/runs/{id}/checkpoints", routes.checkpoints)
    app.router.add_post("/api/staff/runs/{id}/fork", routes.fork)
    app.router.add_post("/api/staff/escalations/{id}/{verb}", routes.escalation_action)
    labels = OutcomeRoutes(routes)
    app.router.add_post("/api/outcomes", labels.outcome)
    app.router.add_post("/api/turns/{id}/label", labels.label)
