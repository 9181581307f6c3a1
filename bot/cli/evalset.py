"""``gatebot evalset``: run a pack's paraphrase set (see :mod:`bot.evalset`) and print how well
the agent understood it, kind by kind."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import click

from bot.app import App
from bot.cli.output import progress
from bot.config import Settings
from bot.evalset import Case, Scores, load_set, run_set


@click.command("evalset")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--pack", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def command(path: Path, pack: Path | None, as_json: bool) -> None:
    """Run the messages in PATH (JSON lines), each in a fresh conversation, on a scratch
    database, and print right / safe / wrong per kind. Exit 0; the numbers are the result."""
    cases = load_set(path)
    scores = asyncio.run(_run(pack, cases))
    if as_json:
        click.echo(json.dumps(scores.as_dict()))
        return
    _print(scores)


async def _run(pack: Path | None, cases: list[Case]) -> Scores:
    settings = Settings.from_env()
    with tempfile.TemporaryDirectory() as scratch:
        # A scratch database and no recorders: an evaluation leaves nothing behind.
        settings.data_dir = Path(scratch)
        settings.database_url = f"sqlite:///{Path(scratch) / 'evalset.db'}"
        settings.recorders = []
        if pack is not None:
            settings.pack = pack
        app = App(settings)
        await app.start(channels=False)
        try:
            return await run_set(
                app.agent, app.store, cases, lambda c: progress(c, "evalset", total=len(c))
            )
        finally:
            await app.stop()


def _print(scores: Scores) -> None:
    click.echo(f"{'kind':<14}{'n':>4}{'right':>7}{'safe':>6}{'wrong':>7}")
    for kind, counts in sorted(scores.counts.items()):
        n = sum(counts.values())
        click.echo(f"{kind:<14}{n:>4}{counts['right']:>7}{counts['safe']:>6}{counts['wrong']:>7}")
    for kind, result, text in scores.misses:
        click.echo(f"  {result:<5} {kind:<13} {text}")
