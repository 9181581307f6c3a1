"""``gatebot catalog PATH``: check a pack's ``apis.yaml`` and list the tools it makes."""

from __future__ import annotations

import json
from typing import Any

import click

from bot.cli.output import table
from bot.errors import PackErrors
from gatebot_catalog.spec import Api, Endpoint, load_catalog


@click.command("catalog")
@click.argument("path", type=click.Path(), default="knowledge/acme")
@click.option("--json", "as_json", is_flag=True, help="Print the APIs and tools as JSON.")
def command(path: str, as_json: bool) -> None:
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
    rows = [_row(api, ep) for api in catalog.apis.values() for ep in api.endpoints.values()]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for api in catalog.apis.values():
        auth = f"credential from ${api.auth.env}" if api.auth else "no credential"
        demo = " (DEMO, served under /demo-api)" if api.demo else ""
        click.echo(f"{api.name}: {api.base_url}{demo}, {auth}")
    click.echo(
        table(
            ["tool", "method", "path", "flags"],
            [[r["tool"], r["method"], r["path"], ", ".join(r["flags"])] for r in rows],
        )
    )


def _row(api: Api, ep: Endpoint) -> dict[str, Any]:
    flags = [f for f, on in (("changes", ep.changes), ("repeat", ep.repeat)) if on]
    if ep.ownership != "any":
        flags.append(f"owned {ep.ownership}")
    if ep.owns:
        flags.append(f"grants {ep.owns}")
    return {
        "tool": f"{api.name}.{ep.id}",
        "api": api.name,
        "base_url": api.base_url,
        "method": ep.method,
        "path": ep.path,
        "flags": flags,
        "credential_env": api.auth.env if api.auth else None,
        "demo": api.demo,
    }
