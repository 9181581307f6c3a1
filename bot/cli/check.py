"""``gatebot check PATH``: validate a pack and say what is wrong, file, line and field."""

from __future__ import annotations

import click

from bot.errors import PackErrors
from bot.packs.checked import load_checked_pack
from bot.plugins import load_plugins


@click.command("check")
@click.argument("path", type=click.Path())
def command(path: str) -> None:
    """Validate the pack at PATH."""
    try:
        # The same checks as the app's start, plugins' included (the API catalog's).
        pack = load_checked_pack(path, load_plugins())
    except PackErrors as exc:
        for error in exc.errors:
            click.echo(f"error: {error}", err=True)
        click.echo(f"{len(exc.errors)} problem(s) in {path}", err=True)
        raise SystemExit(1) from None
    click.echo(
        f"ok: pack {pack.name} version {pack.version}: {len(pack.products)} products, "
        f"{len(pack.intents)} intents, {len(pack.faq)} FAQ entries, "
        f"{len(pack.documents)} documents, "
        f"{len(pack.helpdesks)} help desks"
    )
