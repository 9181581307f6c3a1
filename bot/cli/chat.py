"""``gatebot chat``: a terminal conversation that shows each turn's decisions beside the reply."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import click

from bot.app import App
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
    asyncio.run(_chat(settings, quiet))


def _render(reply: dict[str, Any]) -> str:
    if reply["type"] == "text":
        sources = ", ".join(c["key"] for c in reply.get("citations", []))
        return reply["text"] + (f"  [sources: {sources}]" if sources else "")
    details = ", ".join(f"{k}={v}" for k, v in reply.items() if k not in ("type", "card"))
    return f"[{reply.get('card', reply['type'])} card: {details}]"


async def _chat(settings: Settings, quiet: bool) -> None:
    app = App(settings)
    await app.start(channels=False)
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
        await app.stop()
