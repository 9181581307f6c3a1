"""``gatebot catalog PATH``: check a pack's ``apis.yaml`` and list the tools it makes."""

from __future__ import annotations

import click

from bot.errors import PackErrors
from gatebot_catalog.spec import load_catalog


@click.command("catalog")
@click.argument("path", type=click.Path(), default="knowledge/acme")
def command(path: str) -> None:
    """Check the API catalog of the pack at PATH and list its endpoint tools."""
    try:
        catalog = load_catalog(path)
    except PackErrors as exc:
        for error in exc.errors:
            click.echo(f"error: {error}", err=True)
        click.echo(f"{len(exc.errors)} problem(s) in {path}/apis.yaml", err=True)
        raise SystemExit(1) from None
    if catalog is None:
        click.echo(f"{path} has no apis.yaml: no catalog tools")
        return
    for api in catalog.apis.values():
        auth = f"credential from ${api.auth.env}" if api.auth else "no credential"
        demo = " (DEMO, served under /demo-api)" if api.demo else ""
        click.echo(f"{api.name}: {api.base_url}{demo}, {auth}")
        for ep in api.endpoints.values():
            flags = [f for f, on in (("changes", ep.changes), ("repeat", ep.repeat)) if on]
            if ep.ownership != "any":
                flags.append(f"owned {ep.ownership}")
            if ep.owns:
                flags.append(f"grants {ep.owns}")
            click.echo(f"    {api.name}.{ep.id}  {ep.method} {ep.path}  {', '.join(flags)}")
