"""``gatebot replay``: re-run logged conversations through a new pack, report every decision that
changes, write an HTML report, and exit 1 when more than ``--budget`` turns changed, so a pack
change can be gated in CI (2 for a usage error or a log that cannot be read)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

EXIT_OVER_BUDGET = 1


@click.command("replay")
@click.option(
    "--pack",
    "pack_dir",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The new pack the logged conversations are re-run through.",
)
@click.option(
    "--from-jsonl",
    "jsonl",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the log from a turns.jsonl file (the JSONL recorder's) instead of the store "
    "(DATABASE_URL, or the data dir's SQLite).",
)
@click.option(
    "--since",
    type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]),
    help="Only conversations with a turn at or after this date (UTC; the store only).",
)
@click.option(
    "--conversations",
    "ids",
    help="Only these conversations: a comma list of ids.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--budget",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Turns whose decisions may change before the command exits 1.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report as one self-contained HTML page here.",
)
def command(
    pack_dir: Path,
    jsonl: Path | None,
    since: datetime | None,
    ids: str | None,
    as_json: bool,
    budget: int,
    html_path: Path | None,
) -> None:
    """Replay logged conversations through PACK; exit 1 when more than BUDGET turns change."""
    from bot.config import Settings
    from bot.errors import GatebotError

    if since is not None and jsonl is not None:
        raise click.UsageError("--since reads the store's times; a turns.jsonl has none")
    wanted = [i.strip() for i in ids.split(",") if i.strip()] if ids else None
    settings = Settings.from_env()
    log, source = _load(settings, jsonl, since, wanted)
    if not log:
        raise GatebotError(f"no logged conversations to replay in {source}")
    report = asyncio.run(_replay(log, pack_dir, settings, source))
    if html_path is not None:
        html_path.parent.mkdir(parents=True, exist_ok=True)
        html_path.write_text(report.to_html(), encoding="utf-8")
    click.echo(report.to_json() if as_json else report.to_text(), nl=False)
    changed = len(report.changed)
    if changed > budget:
        click.echo(
            f"replay: {changed} turn(s) changed their decisions, over the budget of {budget}",
            err=True,
        )
        raise SystemExit(EXIT_OVER_BUDGET)


def _load(
    settings: Any, jsonl: Path | None, since: datetime | None, ids: list[str] | None
) -> tuple[list[Any], str]:
    from bot.replay import LogError, from_jsonl, from_store

    if jsonl is not None:
        return from_jsonl(jsonl, ids), str(jsonl)
    from sqlalchemy.exc import SQLAlchemyError

    from bot.store import Store

    url = settings.database_url
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        raise LogError(f"no store at {url} (set DATABASE_URL or GATEBOT_DATA_DIR, or --from-jsonl)")
    store = Store(url)
    try:
        moment = since.replace(tzinfo=UTC) if since is not None else None
        return from_store(store, moment, ids), store.safe_url
    except SQLAlchemyError as exc:
        raise LogError(
            f"cannot read turns from {store.safe_url}: {exc.__class__.__name__}"
        ) from None
    finally:
        store.close()


async def _replay(log: list[Any], pack_dir: Path, settings: Any, source: str) -> Any:
    from bot.cli.output import progress
    from bot.replay import replay

    return await replay(
        log, pack_dir, settings, source, lambda convs: progress(convs, "replay", len(convs))
    )
