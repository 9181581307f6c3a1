"""The ``gatebot`` command line. One module per subcommand group; plugins add their own."""

from __future__ import annotations

import logging
import sys

import click

from bot import __version__
from bot.cli import (
    chat,
    check,
    doctor,
    evalset,
    flows,
    heads,
    plugins_cmd,
    preflight,
    run,
    scope,
)
from bot.errors import GatebotError
from bot.plugins import load_plugins


@click.group()
@click.version_option(__version__, prog_name="gatebot")
@click.option("-v", "--verbose", is_flag=True, help="Log at debug level.")
def cli(verbose: bool) -> None:
    """gatebot: a gated conversational agent for customer conversations."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


for module in (run, chat, check, plugins_cmd, doctor, heads, preflight, flows, scope, evalset):
    cli.add_command(module.command)


def main() -> None:
    try:
        load_plugins().hook.register_commands(cli=cli)
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except GatebotError as exc:
        # A user-facing error: what was wrong and how to fix it, never a traceback.
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
