"""``gatebot plugins``: every plugin, where it comes from, and the hooks it implements."""

from __future__ import annotations

import json

import click

from bot.plugins import load_plugins


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def command(as_json: bool) -> None:
    """List installed plugins and the hooks each implements."""
    manager = load_plugins()
    rows = manager.describe()
    errors = [{"name": e.name, "error": e.reason} for e in manager.errors]
    if as_json:
        click.echo(json.dumps({"plugins": rows, "errors": errors}, indent=2))
        return
    for row in rows:
        click.echo(f"{row['name']}  ({row['distribution'] or 'registered directly'})")
        for hook in row["hooks"]:
            click.echo(f"    {hook}")
    for error in errors:
        click.echo(f"FAILED {error['name']}: {error['error']}", err=True)
