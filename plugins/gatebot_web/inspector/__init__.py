"""The staff inspector: pages over the store behind a login with GATEBOT_ADMIN_TOKEN.

Modules: ``sessions`` (the cookie; the sessions live in the shared database), ``auth`` (log in
and out, the session check), ``routes`` (the pages and actions), ``pages``, ``timeline`` and
``graph`` (HTML), ``export`` (JSON), ``replayjob``, ``replayroutes`` and ``replaypage`` (the
Replay page), ``unansweredpage`` (the Unanswered page), and
``static/`` (the one script and the stylesheet; no inline script, so the CSP stays as it is).
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from bot.extend.host import ChannelHost
from gatebot_web.guard import Guard
from gatebot_web.inspector.auth import Auth
from gatebot_web.inspector.replayjob import ReplayJob
from gatebot_web.inspector.replayroutes import ReplayPages
from gatebot_web.inspector.routes import Actions, Pages
from gatebot_web.inspector.sessions import Sessions
from gatebot_web.inspector.unansweredpage import UnansweredPage

STATIC = Path(__file__).parent / "static"
ASSETS = {"inspector.js": "application/javascript", "inspector.css": "text/css"}
SESSIONS_KEY = web.AppKey("inspector_sessions", Sessions)
REPLAY_KEY = web.AppKey("inspector_replay", ReplayJob)


async def _asset(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    if name not in ASSETS:
        raise web.HTTPNotFound()
    resp = web.FileResponse(STATIC / name)
    resp.content_type = ASSETS[name]
    resp.headers["Cache-Control"] = "no-cache"
    return resp


def add_inspector_routes(app: web.Application, host: ChannelHost, guard: Guard) -> None:
    """Wire the inspector onto the web server's ``app``."""
    sessions = app[SESSIONS_KEY] = Sessions(host)
    auth, pages, actions = Auth(host, guard, sessions), Pages(host), Actions(host)
    job = app[REPLAY_KEY] = ReplayJob(lease_for=host.lease)
    replays, unanswered = ReplayPages(host, job), UnansweredPage(host)
    page, api = (lambda h: auth.required(h, page=True)), (lambda h: auth.required(h, page=False))
    add = app.router
    add.add_get("/inspector/login", auth.login_page)
    add.add_post("/inspector/login", auth.login)
    add.add_post("/inspector/logout", auth.logout)
    add.add_get("/inspector/static/{name}", _asset)
    add.add_get("/inspector", page(pages.conversations))
    add.add_get("/inspector/conversations/{id}", page(pages.conversation))
    add.add_get("/inspector/passages/{key}", page(pages.passage))
    add.add_get("/inspector/escalations", page(pages.escalations))
    add.add_get("/inspector/runs", page(pages.runs))
    add.add_get("/inspector/runs/{id}", page(pages.run))
    add.add_get("/inspector/api/conversations", api(pages.conversations_json))
    add.add_get("/inspector/api/conversations/{id}/export", api(pages.export))
    add.add_post("/inspector/api/escalations/{id}/{verb}", api(actions.escalation))
    add.add_post("/inspector/api/turns/{id}/label", api(actions.label))
    add.add_post("/inspector/api/runs/{id}/rewind", api(actions.rewind))
    add.add_post("/inspector/api/runs/{id}/fork", api(actions.fork))
    add.add_get("/inspector/replay", page(replays.page))
    add.add_get("/inspector/api/replay", api(replays.status))
    add.add_post("/inspector/api/replay", api(replays.start))
    add.add_get("/inspector/api/replay/report.json", api(replays.report_json))
    add.add_get("/inspector/unanswered", page(unanswered.page))
    add.add_get("/inspector/api/unanswered", api(unanswered.json))
    app.on_cleanup.append(lambda _app: job.cancel())
