"""``gatebot run``: every configured channel, until interrupted."""

from __future__ import annotations

import asyncio
import contextlib
import signal

import click

from bot.app import App
from bot.cli.workers import supervise
from bot.config import Settings
from bot.errors import ConfigError
from bot.store.onefile import hold_sqlite_file


@click.command("run")
@click.option("--port", type=int, default=None, help="Web port (default 8080, or GATEBOT_PORT).")
@click.option("--host", default=None, help="Address to bind (default 127.0.0.1, or GATEBOT_HOST).")
@click.option("--pack", type=click.Path(), default=None, help="Pack folder (or GATEBOT_PACK).")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Server processes sharing the port (PostgreSQL only).",
)
def command(port: int | None, host: str | None, pack: str | None, workers: int) -> None:
    """Run the bot on every configured channel."""
    settings = Settings.from_env()
    if port is not None:
        settings.port = port
    if host is not None:
        settings.host = host
    if pack is not None:
        settings.pack = settings.pack.__class__(pack)
    try:
        _one_process_per_sqlite_file(settings, workers)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if workers == 1:
        asyncio.run(_serve(settings))
        return
    if settings.port == 0:
        raise click.UsageError("--workers needs a fixed --port: each worker binds the same one")
    settings.reuse_port = True
    raise SystemExit(supervise(workers, lambda: asyncio.run(_serve(settings))))


def _one_process_per_sqlite_file(settings: Settings, workers: int) -> None:
    """SQLite serves one process: refuse ``--workers`` over 1, and a second ``gatebot run`` on
    the same file (held until this process exits)."""
    if not settings.database_url.startswith("sqlite"):
        return
    if workers > 1:
        raise ConfigError(
            f"--workers {workers} needs PostgreSQL: SQLite serves one process. Set DATABASE_URL "
            "to a PostgreSQL database to run several workers."
        )
    hold_sqlite_file(settings.database_url)


async def _serve(settings: Settings) -> None:
    app = App(settings)
    for error in app.plugins.errors:
        click.echo(f"warning: {error}", err=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await app.start()
    names = ", ".join(c.name for c in app.channels) or "none"
    click.echo(
        f"gatebot on pack {app.pack.name} ({app.pack.version}), model {app.info()['provider']},"
        f" channels: {names}",
        err=True,
    )
    if app.channel("web"):
        click.echo(f"widget and API at http://{settings.host}:{settings.port}/", err=True)
    try:
        await stop.wait()
    finally:
        await app.stop()
