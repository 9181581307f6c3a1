"""The ``gatebot`` command line. One module per subcommand group; plugins add their own."""

from __future__ import annotations

import sys

import click

from bot import __version__
from bot.cli import (
    chat,
    check,
    data,
    doctor,
    evalset,
    flows,
    heads,
    heads_outcomes,
    plugins_cmd,
    preflight,
    record_schema,
    replay,
    run,
    scope,
    unanswered,
)
from bot.cli.output import setup_logging
from bot.errors import GatebotError
from bot.plugins import load_plugins


@click.group()
@click.version_option(__version__, prog_name="gatebot")
@click.option(
    "-v",
    "--verbose",
    count=True,
    help="Log more: -v at info level, -vv at debug level (default: warnings and errors).",
)
def cli(verbose: int) -> None:
    """gatebot: a gated conversational agent for customer conversations.

    Exit codes: 0 done, 1 a check failed or something changed (doctor, preflight replay,
    replay over its budget, a record breaking its schema),
    2 a usage or configuration error, 130 interrupted.
    """
    setup_logging(verbose)


COMMANDS = (
    run,
    chat,
    check,
    plugins_cmd,
    doctor,
    heads,
    preflight,
    replay,
    flows,
    scope,
    evalset,
    data,
    unanswered,
    record_schema,
)
for module in COMMANDS:
    cli.add_command(module.command)
heads.command.add_command(heads_outcomes.report)
heads.command.add_command(heads_outcomes.promote)


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
