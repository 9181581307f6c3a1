"""``gatebot preflight replay``: replay a labelled set through pre-flight, compare the decisions
with the labels and with the previous run, write a report, and exit 1 when a decision changed
(2 when the run itself failed, the alert included), so a nightly job can alert on it."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import click

from bot.errors import GatebotError

EXIT_CHANGED = 1
EXIT_FAILED = 2


def _data_dir() -> Path:
    return Path(os.environ.get("GATEBOT_DATA_DIR") or "var")


@click.group("preflight")
def command() -> None:
    """Pre-flight routing: replay a labelled set and report changed decisions."""


@command.command("replay")
@click.option(
    "--labels",
    "labels_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='JSONL: {"text", "decision"?, "answers"?} per line.',
)
@click.option(
    "--pack",
    "pack_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The pack (default GATEBOT_PACK or knowledge/acme).",
)
@click.option(
    "--previous",
    "previous_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The previous run's decisions (default DATA_DIR/preflight/last-run.json); this run's "
    "replace them.",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the JSON report (default DATA_DIR/preflight/report.json); the text "
    "report goes beside it as .txt.",
)
@click.option(
    "--alert",
    is_flag=True,
    help="Email the report to the default help desk when a "
    "decision changed (GATEBOT_EMAIL); a failure to send exits 2.",
)
def replay(
    labels_path: Path,
    pack_dir: Path | None,
    previous_path: Path | None,
    report_path: Path | None,
    alert: bool,
) -> None:
    """Replay LABELS through the current pack and model; exit 1 when any decision changed."""
    from bot.config import Settings

    settings = Settings.from_env()
    if pack_dir is not None:
        settings.pack = pack_dir
    previous_path = previous_path or _data_dir() / "preflight" / "last-run.json"
    report_path = report_path or _data_dir() / "preflight" / "report.json"
    report, failed = asyncio.run(_replay(settings, labels_path, previous_path, alert))
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
    from bot.preflight.replay import render_text

    text = render_text(report)
    report_path.with_suffix(".txt").write_text(text, "utf-8")
    previous_path.parent.mkdir(parents=True, exist_ok=True)
    kept = {
        "pack": report["pack"],
        "model": report["model"],
        "decisions": [
            {"id": r["id"], "text": r["text"], "decision": r["decision"]}
            for r in report["decisions"]
        ],
    }
    previous_path.write_text(json.dumps(kept, indent=2, ensure_ascii=False) + "\n", "utf-8")
    click.echo(text, nl=False)
    click.echo(f"report: {report_path}")
    if failed:
        click.echo(f"error: {failed}", err=True)
        raise SystemExit(EXIT_FAILED)
    if report["changed"]:
        raise SystemExit(EXIT_CHANGED)


async def _replay(
    settings: Any, labels_path: Path, previous_path: Path, alert: bool
) -> tuple[dict[str, Any], str | None]:
    from bot.app import Registry
    from bot.cli.output import progress
    from bot.extend.email import NoEmail
    from bot.packs import load_pack
    from bot.plugins import load_plugins
    from bot.preflight.replay import build_report, read_labels, render_text, run_cases
    from bot.preflight.stage import Preflight
    from bot.turn.reading import Readers

    pack = load_pack(settings.pack)
    registry = Registry(load_plugins())
    name, _, model = settings.model.partition(":")
    if name not in registry.providers:
        raise GatebotError(f"GATEBOT_MODEL={settings.model!r} names no registered provider")
    provider = registry.providers[name](model)
    previous = None
    if previous_path.is_file():
        previous = json.loads(previous_path.read_text("utf-8"))
    try:
        retriever = await _retriever(registry, pack)
        preflight = Preflight(pack, provider, Readers(pack), "shadow", retriever)
        rows = await run_cases(
            pack, preflight, read_labels(labels_path), lambda c: progress(c, "preflight replay")
        )
    finally:
        await provider.aclose()
    report = build_report(pack, settings.model, rows, previous, previous_path)
    failed = None
    if alert and report["changed"]:
        desk = pack.default_helpdesk()
        email = (
            registry.email[settings.email](settings)
            if settings.email in registry.email
            else NoEmail()
        )
        report["alert"] = {"to": desk.email if desk else None, "sent": False, "error": None}
        try:
            if desk is None or not desk.email:
                raise GatebotError("the pack's default help desk has no email address")
            subject = f"gatebot pre-flight: {len(report['changed'])} decision(s) changed"
            report["alert"]["id"] = await email.send(desk.email, subject, render_text(report))
            report["alert"]["sent"] = True
        except Exception as exc:  # an alert that did not go out is said, never assumed
            report["alert"]["error"] = str(exc)
            failed = f"alert not sent: {exc}"
    return report, failed


async def _retriever(registry: Any, pack: Any) -> Any:
    """The retriever the app would use for ``pack`` (the last registered), built with no store
    and started, so a replay reads FAQ matches as a live turn does; None when none is
    registered (pre-flight then compares the FAQ's keywords)."""
    if not registry.retrievers:
        return None
    from types import SimpleNamespace

    retriever = registry.retrievers[-1](SimpleNamespace(pack=pack, store=None))
    start = getattr(retriever, "start", None)
    if start is not None:
        await start()
    return retriever
