"""``gatebot check PATH``: validate a pack and list every problem with its place."""

from __future__ import annotations

import click

from bot.cli.output import echo_json
from bot.errors import PackErrors
from bot.packs.checked import load_checked_pack
from bot.plugins import load_plugins


@click.command("check")
@click.argument("path", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def command(path: str, as_json: bool) -> None:
    """Validate the pack at PATH; exits 1 when it has problems."""
    try:
        # The same checks as the app's start, plugins' included (the API catalog's).
        pack = load_checked_pack(path, load_plugins())
    except PackErrors as exc:
        if as_json:
            echo_json(
                {
                    "ok": False,
                    "errors": [
                        {"file": e.file, "line": e.line, "field": e.field, "message": e.message}
                        for e in exc.errors
                    ],
                }
            )
        else:
            for error in exc.errors:
                click.echo(f"error: {error}", err=True)
            click.echo(f"{len(exc.errors)} problem(s) in {path}", err=True)
        raise SystemExit(1) from None
    counts = {
        "products": len(pack.products),
        "intents": len(pack.intents),
        "faq": len(pack.faq),
        "documents": len(pack.documents),
        "helpdesks": len(pack.helpdesks),
    }
    if as_json:
        echo_json({"ok": True, "pack": pack.name, "version": pack.version, **counts})
        return
    click.echo(
        f"ok: pack {pack.name} version {pack.version}: {counts['products']} products, "
        f"{counts['intents']} intents, {counts['faq']} FAQ entries, "
        f"{counts['documents']} documents, "
        f"{counts['helpdesks']} help desks"
    )
