"""What every command prints the same way: log verbosity, tables, JSON and progress bars.

Output a person reads goes to stdout as a table; ``--json`` prints the same rows as JSON for
scripts; logs and progress bars go to stderr, so neither ever mixes into what a script parses.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

import click

T = TypeVar("T")

# -v and -vv; the default shows warnings and errors only.
LEVELS = {0: logging.WARNING, 1: logging.INFO}


def level_for(verbosity: int) -> int:
    return LEVELS.get(verbosity, logging.DEBUG)


def setup_logging(verbosity: int) -> None:
    """One stderr handler at the chosen level. The handler filters, not only the root logger,
    because some libraries (bm25s) set their own logger to DEBUG and would otherwise print."""
    level = level_for(verbosity)
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # SQLAlchemy logs every statement at INFO once the root logger allows it; statements are for
    # debugging only (their parameters, customer text, are hidden by the engine in any case).
    logging.getLogger("sqlalchemy.engine").setLevel(
        level if level <= logging.DEBUG else logging.WARNING
    )
    if level > logging.DEBUG:
        # Model loading draws "Loading weights" bars through huggingface_hub's switch, read when
        # transformers is first imported; a user's own setting wins.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """Left-aligned columns two spaces apart, a header line and a rule under it."""
    cells = [[str(c) for c in headers], *([str(c) for c in row] for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def progress(items: Iterable[T], desc: str, total: int | None = None) -> Iterator[T]:
    """``items`` with a tqdm bar on stderr while a person watches (a terminal); plain iteration
    when stderr is not a terminal or tqdm (the ``ml`` extra) is not installed."""
    try:
        from tqdm import tqdm
    except ImportError:
        yield from items
        return
    yield from tqdm(items, desc=desc, total=total, file=sys.stderr, disable=None, leave=False)
