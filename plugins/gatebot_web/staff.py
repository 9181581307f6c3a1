"""The staff REST API for flows: list and show flows, runs and their checkpoints, and fork.

Every route needs ``Authorization: Bearer $GATEBOT_ADMIN_TOKEN``. A customer's conversation token
is a different secret and never opens it. With no admin token configured the staff API is off:
each route answers 403 saying so.
"""

from __future__ import annotations

import hmac
import os
from typing import TYPE_CHECKING, Any

from aiohttp import web

from bot.flows import service

if TYPE_CHECKING:
    from bot.app import App


def _admin_token(gb: App) -> str | None:
    return gb.settings.admin_token or os.environ.get("GATEBOT_ADMIN_TOKEN") or None


def add_staff_routes(app: web.Application, gb: App, api_error: Any, bearer: Any, body: Any) -> None:
    """Wire the routes; ``api_error``, ``bearer`` and ``body`` are the server's own helpers."""

    def authorise(request: web.Request) -> None:
        expected = _admin_token(gb)
        if not expected:
            raise api_error(
                403, "staff_api_off", "the staff API is off: set GATEBOT_ADMIN_TOKEN to turn it on"
            )
        given = bearer(request)
        if not given or not hmac.compare_digest(given.encode(), expected.encode()):
            raise api_error(401, "unauthorized", "missing or wrong staff token")

    def op_error(exc: service.FlowOpError) -> Exception:
        code = {400: "bad_request", 404: "not_found", 409: "conflict"}.get(exc.status, "error")
        error: Exception = api_error(exc.status, code, str(exc))
        return error

    async def flows(request: web.Request) -> web.Response:
        authorise(request)
        disabled = gb.agent.flows.disabled
        rows = [
            service.describe_flow(f, disabled.get(f.name))
            for f in sorted(gb.pack.flows.values(), key=lambda f: f.name)
        ]
        return web.json_response({"flows": rows})

    async def flow(request: web.Request) -> web.Response:
        authorise(request)
        found = gb.pack.flows.get(request.match_info["name"])
        if found is None:
            raise api_error(404, "not_found", "no such flow")
        return web.json_response(service.show_flow(found, gb.agent.flows.disabled.get(found.name)))

    async def runs(request: web.Request) -> web.Response:
        authorise(request)
        conversation = request.query.get("conversation") or None
        found = gb.store.flow_runs(conversation)
        return web.json_response({"runs": [service.run_json(r) for r in found]})

    async def checkpoints(request: web.Request) -> web.Response:
        authorise(request)
        run = gb.store.get_flow_run(request.match_info["id"])
        if run is None:
            raise api_error(404, "not_found", "no such flow run")
        cps = gb.store.checkpoints(run.id)
        return web.json_response(
            {"run": service.run_json(run), "checkpoints": [service.checkpoint_json(c) for c in cps]}
        )

    async def fork(request: web.Request) -> web.Response:
        authorise(request)
        data = await body(request)
        at_step, at_cp = data.get("at_step"), data.get("at_checkpoint")
        if (at_step is None) == (at_cp is None):
            raise api_error(400, "bad_request", "give exactly one of at_step or at_checkpoint")
        if at_step is not None and not isinstance(at_step, str):
            raise api_error(400, "bad_request", "at_step must be a step id")
        if at_cp is not None and (not isinstance(at_cp, int) or isinstance(at_cp, bool)):
            raise api_error(400, "bad_request", "at_checkpoint must be an integer index")
        output, allow = data.get("output"), data.get("allow_side_effects", False)
        if output is not None and not isinstance(output, dict):
            raise api_error(400, "bad_request", "output must be a JSON object")
        if not isinstance(allow, bool):
            raise api_error(400, "bad_request", "allow_side_effects must be true or false")
        try:
            run, copies = service.fork(
                gb.store,
                gb.pack,
                request.match_info["id"],
                at_step=at_step,
                at_checkpoint=at_cp,
                output=output,
                allow_side_effects=allow,
            )
        except service.FlowOpError as exc:
            raise op_error(exc) from None
        return web.json_response(
            {
                "run": service.run_json(run),
                "checkpoints": [service.checkpoint_json(c) for c in copies],
            },
            status=201,
        )

    app.router.add_get("/api/staff/flows", flows)
    app.router.add_get("/api/staff/flows/{name}", flow)
    app.router.add_get("/api/staff/runs", runs)
    app.router.add_get("/api/staff/runs/{id}/checkpoints", checkpoints)
    app.router.add_post("/api/staff/runs/{id}/fork", fork)
