"""``gatebot chat``: a terminal conversation that shows each turn's decisions beside the reply."""

from __future__ import annotations

import asyncio
import socket
import uuid
from typing import Any

import click

from bot.app import App
from bot.cli.loopback import reserve_port, serve_routes
from bot.config import Settings
from bot.extend.recorder import summarise


@click.command("chat")
@click.option("--pack", type=click.Path(), default=None, help="Pack folder (or GATEBOT_PACK).")
@click.option("--quiet", is_flag=True, help="Show replies only, not the decisions.")
def command(pack: str | None, quiet: bool) -> None:
    """Talk to the agent in the terminal. End with Ctrl-D or /quit."""
    settings = Settings.from_env()
    if pack is not None:
        settings.pack = settings.pack.__class__(pack)
    # The plugins' routes (the demo orders API) are served on a loopback port of this process;
    # the app is built for that address, so the catalog's demo base URL points at it.
    sock = reserve_port()
    settings.host, settings.port = "127.0.0.1", sock.getsockname()[1]
    try:
        asyncio.run(_chat(settings, quiet, sock))
    finally:
        sock.close()


def _render(reply: dict[str, Any]) -> str:
    if reply["type"] == "text":
        sources = ", ".join(c["key"] for c in reply.get("citations", []))
        return reply["text"] + (f"  [sources: {sources}]" if sources else "")
    details = ", ".join(f"{k}={v}" for k, v in reply.items() if k not in ("type", "card"))
    return f"[{reply.get('card', reply['type'])} card: {details}]"


async def _chat(settings: Settings, quiet: bool, sock: socket.socket) -> None:
    app = App(settings)
    await app.start(channels=False)
    runner = await serve_routes(app.host.routes, sock) if app.host.routes else None
    if runner is not None:
        paths = ", ".join(sorted({"/" + path.split("/")[1] for _, path, _ in app.host.routes}))
        click.echo(
            f"Plugin routes ({paths}) served for this chat on http://127.0.0.1:{settings.port}/.",
            err=True,
        )
    conv, _ = app.store.create_conversation("cli", external_id=uuid.uuid4().hex)
    click.echo(
        f"Chatting with the {app.pack.company} agent (pack {app.pack.name} "
        f"{app.pack.version}, model {app.info()['provider']}). /quit to leave."
    )
    try:
        while True:
            try:
                text = await asyncio.to_thread(input, "you> ")
            except EOFError:
                break
            if text.strip() in ("/quit", "/exit"):
                break
            if not text.strip():
                continue
            result = await app.agent.handle(conv, text, uuid.uuid4().hex)
            for reply in result.replies:
                click.echo(f"bot> {_render(reply)}")
            if not quiet:
                click.echo(click.style(summarise(result.record), dim=True))
    finally:
        if runner is not None:
            await runner.cleanup()
        await app.stop()
