"""A loopback Slack for tests: the Web API methods gatebot calls, each call recorded, and a
Socket Mode websocket that a test drives envelope by envelope.

Answers like Slack does, as far as gatebot reads: ``auth.test`` names the bot (UBOT/BBOT),
``chat.postMessage`` gives each message a new ``ts``, ``conversations.members`` lists the
members a test set, and ``apps.connections.open`` hands out this server's websocket URL.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

BOT_USER, BOT_ID, TEAM = "UBOT", "BBOT", "T1"


@dataclass
class Call:
    method: str
    body: dict[str, Any]
    token: str | None = field(default=None, repr=False)
    answer: dict[str, Any] = field(default_factory=dict)


class SlackServer:
    def __init__(self, members: dict[str, list[str]] | None = None) -> None:
        self.members = members or {}
        #: Display names ``users.info`` answers with, by user id (others: user_not_found).
        self.names: dict[str, str] = {}
        #: Methods to fail, with the error Slack would give: {"conversations.members": "..."}.
        self.failures: dict[str, str] = {}
        #: Refuse any message with blocks, as Slack does blocks it finds invalid.
        self.reject_blocks = False
        self.calls: list[Call] = []
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._changed: asyncio.Condition | None = None
        self._sockets: list[web.WebSocketResponse] = []
        self._connected: asyncio.Event | None = None
        self._acks: asyncio.Queue[dict[str, Any]] | None = None
        self._ts = 0

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        self._changed = asyncio.Condition()
        self._connected = asyncio.Event()
        self._acks = asyncio.Queue()
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_get("/socket", self._socket)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        for ws in self._sockets:
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    # -- the Web API ---------------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        body: dict[str, Any] = dict(request.query)
        if request.method == "POST" and request.can_read_body:
            if request.content_type == "application/json":
                body.update(await request.json())
            else:
                body.update(await request.post())
        auth = request.headers.get("Authorization", "")
        token = (
            auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else body.pop("token", None)
        )
        answer = self._answer(method, body)
        assert self._changed is not None
        async with self._changed:
            self.calls.append(Call(method, body, token, answer))
            self._changed.notify_all()
        return web.json_response(answer)

    def _next_ts(self) -> str:
        self._ts += 1
        return f"{1700000000 + self._ts}.{self._ts:06d}"

    def _answer(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        if method in self.failures:
            return {"ok": False, "error": self.failures[method]}
        if self.reject_blocks and body.get("blocks"):
            return {"ok": False, "error": "invalid_blocks"}
        if method == "auth.test":
            return {"ok": True, "user_id": BOT_USER, "bot_id": BOT_ID, "team_id": TEAM}
        if method in ("chat.postMessage", "chat.postEphemeral"):
            ts = self._next_ts()
            return {"ok": True, "channel": body.get("channel"), "ts": ts, "message_ts": ts}
        if method == "conversations.members":
            members = self.members.get(str(body.get("channel")), [])
            return {"ok": True, "members": members, "response_metadata": {"next_cursor": ""}}
        if method == "users.info":
            name = self.names.get(str(body.get("user")))
            if name is None:
                return {"ok": False, "error": "user_not_found"}
            return {"ok": True, "user": {"id": body.get("user"), "profile": {"display_name": name}}}
        if method == "apps.connections.open":
            return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/socket"}
        return {"ok": False, "error": "unknown_method"}

    def calls_to(self, method: str, **match: Any) -> list[Call]:
        """Calls of ``method`` whose body has every ``match`` field equal."""
        return [
            c
            for c in self.calls
            if c.method == method and all(c.body.get(k) == v for k, v in match.items())
        ]

    async def wait_for(
        self, method: str, count: int = 1, timeout: float = 5.0, **match: Any
    ) -> list[Call]:
        """Wait (bounded) until ``count`` matching calls came in; return them all."""
        assert self._changed is not None
        changed = self._changed
        async with changed:
            await asyncio.wait_for(
                changed.wait_for(lambda: len(self.calls_to(method, **match)) >= count), timeout
            )
        return self.calls_to(method, **match)

    # -- Socket Mode ---------------------------------------------------------------------------

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        assert self._connected is not None and self._acks is not None
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": 1})
        self._connected.set()
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                self._acks.put_nowait(json.loads(msg.data))
        return ws

    async def send_envelope(
        self, payload: dict[str, Any], kind: str = "events_api", timeout: float = 5.0
    ) -> str:
        """Push one envelope down the open websocket; returns its envelope_id."""
        assert self._connected is not None
        await asyncio.wait_for(self._connected.wait(), timeout)
        envelope_id = secrets.token_hex(8)
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": False,
            "retry_attempt": 0,
            "retry_reason": "",
        }
        await self._sockets[-1].send_json(envelope)
        return envelope_id

    async def next_ack(self, timeout: float = 5.0) -> dict[str, Any]:
        assert self._acks is not None
        return await asyncio.wait_for(self._acks.get(), timeout)
