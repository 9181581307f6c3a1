"""``gatebot flows``: list, show, runs, checkpoints, rewind, fork, export, import, compile."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import click

from bot.cli.output import table
from bot.config import Settings
from bot.errors import PackErrors
from bot.flows import service
from bot.flows.load import check_tools, export_flow, import_flow
from bot.flows.model import Flow
from bot.packs import Pack, load_pack
from bot.store import Store


def _settings() -> Settings:
    return Settings.from_env()


def _pack() -> Pack:
    return load_pack(_settings().pack)


def _store() -> Store:
    store = Store(_settings().database_url)
    store.migrate()
    return store


def _echo(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


@click.group("flows")
def command() -> None:
    """Procedures: inspect flows and their runs, rewind and fork, export, import, compile."""


@command.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the flows as JSON.")
def list_(as_json: bool) -> None:
    """The pack's flows and their schedules."""
    rows = [service.describe_flow(f) for f in sorted(_pack().flows.values(), key=lambda f: f.name)]
    if as_json:
        _echo(rows)
        return
    click.echo(
        table(
            ["flow", "version", "status", "title", "order"],
            [
                [r["name"], f"v{r['version']}", r["status"], r["title"], " ".join(r["schedule"])]
                for r in rows
            ],
        )
    )


@command.command("show")
@click.argument("name")
def show(name: str) -> None:
    """One flow's metadata, schedule and definition."""
    flow = _pack().flows.get(name)
    if flow is None:
        raise click.ClickException(f"no flow {name!r} in the pack")
    _echo(service.show_flow(flow))


@command.command("runs")
@click.option("--conversation", default=None, help="Only this conversation's runs.")
def runs(conversation: str | None) -> None:
    """Flow runs, oldest first."""
    _echo([service.run_json(r) for r in _store().flow_runs(conversation)])


@command.command("checkpoints")
@click.argument("run_id")
def checkpoints(run_id: str) -> None:
    """Every checkpoint of a run."""
    _echo([service.checkpoint_json(c) for c in _store().checkpoints(run_id)])


@command.command("rewind")
@click.argument("run_id")
@click.option("--to", "to_step", default=None, help="A completed step id (its latest pass).")
@click.option("--checkpoint", type=int, default=None, help="A checkpoint index.")
def rewind(run_id: str, to_step: str | None, checkpoint: int | None) -> None:
    """What a completed step saw and produced. Changes nothing; fork to branch from there."""
    try:
        _echo(service.checkpoint_json(service.rewind(_store(), run_id, to_step, checkpoint)))
    except service.FlowOpError as exc:
        raise click.ClickException(str(exc)) from None


@command.command("fork")
@click.argument("run_id")
@click.option("--at", "at_step", default=None, help="Fork after this completed step.")
@click.option("--checkpoint", type=int, default=None, help="Fork after this checkpoint index.")
@click.option(
    "--output",
    "output_file",
    type=click.Path(exists=True),
    default=None,
    help="A JSON file: the step's output, edited by hand.",
)
@click.option(
    "--allow-side-effects",
    is_flag=True,
    help="Let changes tools really run on the fork (default: they run dry).",
)
def fork(
    run_id: str,
    at_step: str | None,
    checkpoint: int | None,
    output_file: str | None,
    allow_side_effects: bool,
) -> None:
    """A new run from a checkpoint; the original run is left as it was."""
    output = json.loads(Path(output_file).read_text()) if output_file else None
    try:
        run, copies = service.fork(
            _store(),
            _pack(),
            run_id,
            at_step=at_step,
            at_checkpoint=checkpoint,
            output=output,
            allow_side_effects=allow_side_effects,
        )
    except service.FlowOpError as exc:
        raise click.ClickException(str(exc)) from None
    _echo({"run": service.run_json(run), "checkpoints": len(copies)})


@command.command("export")
@click.argument("name")
def export(name: str) -> None:
    """A flow as versioned JSON on stdout."""
    flow = _pack().flows.get(name)
    if flow is None:
        raise click.ClickException(f"no flow {name!r} in the pack")
    _echo(export_flow(flow))


@command.command("import")
@click.argument("path", type=click.Path(exists=True))
@click.option("--into", type=click.Path(), default=None, help="Pack folder (default: the pack).")
def import_(path: str, into: str | None) -> None:
    """Validate an export (its steps, and its tools against the registered plugins) and write it
    into the pack's flows/ as YAML. Exits 1, writing nothing, when it is not valid."""
    import yaml

    settings = _settings()
    pack = load_pack(settings.pack)
    try:
        flow = import_flow(Path(path).read_text(encoding="utf-8"), path, pack.roles, pack.mods)
    except PackErrors as exc:
        _refuse(path, [str(e) for e in exc.errors])
    problems = _tool_problems(settings, flow)
    if problems:
        _refuse(path, problems)
    folder = Path(into or pack.root) / "flows"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{flow.name}.yaml"
    target.write_text(yaml.safe_dump(flow.raw, sort_keys=False, allow_unicode=True))
    click.echo(f"ok: flow {flow.name} written to {target}")


def _tool_problems(settings: Settings, flow: Flow) -> list[str]:
    """The flow's tools against what the installed plugins register for this pack (the API
    catalog's endpoints included), on an app that writes nothing."""
    from bot.app import App

    app = App(replace(settings, database_url="sqlite:///:memory:", recorders=[]))
    try:
        changes = {t.name for t in app.tools if t.changes}
        problems = check_tools(flow, set(app.tools.tools), changes)
        known = ", ".join(sorted(app.tools.tools)) or "none"
        hint = f"the installed plugins register these tools for this pack: {known}"
        return [*problems, hint] if problems else []
    finally:
        app.store.close()


def _refuse(path: str, problems: list[str]) -> NoReturn:
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    click.echo(f"{path} is not valid: no flow written", err=True)
    raise SystemExit(1)


@command.command("compile")
@click.argument("sentence")
@click.option(
    "--out",
    type=click.Path(),
    default=None,
    help="Where drafts go (default: pack's flows/drafts/).",
)
def compile_(sentence: str, out: str | None) -> None:
    """Have the configured model draft a flow from SENTENCE; saved as a draft to edit."""
    from bot.app import App
    from bot.flows.compile import compile_flow

    app = App(_settings())
    try:
        flow, saved, _ = asyncio.run(
            compile_flow(
                app.pack,
                app.provider,
                sentence,
                [t.name for t in app.tools],
                Path(out) if out else app.pack.root / "flows" / "drafts",
            )
        )
    finally:
        app.store.close()
    click.echo(f"draft flow {flow.name} saved to {saved}; edit it, then move it into flows/")
