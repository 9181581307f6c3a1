"""``GATEBOT_RETENTION_DAYS``: conversations idle longer than N days are erased, through the same
path as ``gatebot data erase`` (rows deleted, JSONL lines removed, an erasure event recorded with
ids and counts only). Unset: conversations are kept until erased by hand."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from bot.extend.recorder import erase_lines
from bot.store import Store
from bot.store.models import now


def erase_expired(store: Store, jsonl_path: Path, days: int) -> list[str]:
    """Erase every conversation whose last activity is more than ``days`` days old; their ids."""
    ids = store.inactive_since(now() - timedelta(days=days))
    if ids:
        lines = erase_lines(jsonl_path, set(ids))
        store.erase_customer(ids, "retention", {"jsonl_lines": lines})
    return ids
