"""``gatebot check PATH``: validate a pack and say what is wrong, file, line and field."""

from __future__ import annotations

import click

from bot.errors import PackErrors
from bot.packs import load_pack


@click.command("check")
@click.argument("path", type=click.Path())
def command(path: str) -> None:
    """Validate the pack at PATH."""
    try:
        pack = load_pack(path)
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
