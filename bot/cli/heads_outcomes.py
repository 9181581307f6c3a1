"""``gatebot heads report`` and ``gatebot heads promote``: heads and the conversion forecast
scored against what staff and outcomes say happened, and the gate a candidate head passes.

Both read the store ``DATABASE_URL`` names (``GATEBOT_DATA_DIR``'s SQLite by default); only
``promote`` writes, and only into the pack.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from bot.config import Settings
from bot.errors import GatebotError
from bot.store import Store

PROMOTION_EXIT = 1


def _store() -> Store:
    store = Store(Settings.from_env().database_url)
    store.migrate()
    return store


def _interval_line(s: dict[str, Any]) -> str:
    parts = []
    for key, words in (("selective_accuracy", "selective accuracy"), ("coverage", "coverage")):
        parts.append(
            f"{words} {s[key]['value']:.3f} [{s[key]['ci'][0]:.3f}, {s[key]['ci'][1]:.3f}]"
        )
    parts.append(f"ECE {s['ece']['value']:.3f} [{s['ece']['ci'][0]:.3f}, {s['ece']['ci'][1]:.3f}]")
    return "  " + ", ".join(parts)


def _head_sections(store: Store, head: str, gate: float) -> tuple[list[dict[str, Any]], list[Any]]:
    from bot.outcomes.evaluation import readings, summary, versions_read

    turns = store.labelled_turns(head)
    sections, read = [], []
    for where in ("reads", "shadow"):
        for version in versions_read(turns, head, where)[:3]:
            r = readings(turns, head, version, gate, where)
            sections.append(
                {"reader": "candidate" if where == "shadow" else "acting", **summary(r)}
            )
            read.append(r)
    return sections, read


def _print_head(section: dict[str, Any], gate: float) -> None:
    role = " (candidate, in the shadow)" if section["reader"] == "candidate" else ""
    click.echo(
        f"{section['version']}{role} on {section['n']} labelled turns "
        f"({section['in_scope']} in scope) at gate {gate}; 95% bootstrap intervals"
    )
    if section["n"]:
        click.echo(_interval_line(section))


def _print_forecast(f: dict[str, Any], gate: float) -> None:
    versions = ", ".join(f["versions"]) or "none recorded"
    click.echo(f"conversion forecast ({versions}) on {f['n']} conversations with an outcome")
    if not f["n"]:
        return
    p = f["p_convert"]
    click.echo(
        f"  p_convert: ECE {p['ece']:.3f}, Brier {p['brier']:.3f}, mean p {p['mean_p']:.3f}, "
        f"converted (purchase or trial) {p['base_rate']:.3f}"
    )
    click.echo(f"  as a two-class reading at gate {gate}:")
    click.echo(_interval_line(f))


def _panels(head_reads: list[Any], forecasts: Any, gate: float) -> list[dict[str, Any]]:
    from bot.outcomes.evaluation import point, reliability

    panels = []
    for r in head_reads[:2]:
        if len(r):
            bins = reliability(r.confidence, r.correct)
            panels.append({"title": r.version, "bins": bins, "ece": point(r)["ece"], "gate": gate})
    if len(forecasts.p):
        bins = reliability(forecasts.p, forecasts.converted)
        gap = sum(b["n"] * abs(b["confidence"] - b["accuracy"]) for b in bins) / len(forecasts.p)
        panels.append(
            {
                "title": "conversion forecast",
                "bins": bins,
                "ece": gap,
                "xlabel": "p_convert",
                "ylabel": "converted (purchase or trial)",
            }
        )
    return panels


@click.command("report")
@click.option("--head", "head", default="intent", show_default=True, help="The head to score.")
@click.option("--gate", default=0.9, show_default=True, help="The gate coverage is measured at.")
@click.option("--png", type=click.Path(dir_okay=False, path_type=Path), help="Write the diagram.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def report(head: str, gate: float, png: Path | None, as_json: bool) -> None:
    """Reliability, ECE, coverage and selective accuracy of a head's recorded readings of the
    turns staff labelled, and of the conversion forecast against the outcomes."""
    from bot.outcomes.evaluation import forecast_summary, forecasts

    store = _store()
    try:
        sections, head_reads = _head_sections(store, head, gate)
        outcomes = store.outcomes()
        f = forecasts(outcomes, store.last_turns(sorted({o.conversation_id for o in outcomes})))
    finally:
        store.close()
    fsum = forecast_summary(f, gate)
    if png is not None:
        from bot.outcomes.diagram import draw

        draw(_panels(head_reads, f, gate), png)
    if as_json:
        click.echo(json.dumps({"head": head, "gate": gate, "versions": sections, "forecast": fsum}))
        return
    if not sections:
        click.echo(
            f"no labelled turn of head {head} yet (staff label turns: POST /api/turns/ID/label)"
        )
    for section in sections:
        _print_head(section, gate)
    _print_forecast(fsum, gate)
    if png is not None:
        click.echo(f"wrote {png}")


def _rule_line(name: str, rule: dict[str, Any]) -> str:
    mark = "pass" if rule["passed"] else "FAIL"
    return (
        f"  {mark} {rule['rule']}: candidate {rule['candidate']:.4f} vs pinned "
        f"{rule['pinned']:.4f}, difference {rule['difference']:+.4f} "
        f"[{rule['ci'][0]:+.4f}, {rule['ci'][1]:+.4f}]"
    )


def _print_verdict(name: str, summary: dict[str, Any], verdict: Any, record: Path | None) -> None:
    click.echo(
        f"{summary['candidate']} against {summary['pinned']} on {verdict.turns} labelled turns "
        f"neither trained on ({summary['trained_on_left_out']} left out), gate {summary['gate']}"
    )
    for rule_name, rule in verdict.rules.items():
        click.echo(_rule_line(rule_name, rule))
    if verdict.promoted and record is not None:
        click.echo(f"promoted: {name} pinned at {summary['new_version']}; why: {record}")
    elif verdict.promoted:
        click.echo("would promote (dry run: nothing written)")
    else:
        click.echo(f"refused: {verdict.reason}")


@click.command("promote")
@click.argument("name")
@click.option("--pack", "pack_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--gate", type=float, help="The gate (default: the pack's gate for intent).")
@click.option(
    "--margin", default=0.02, show_default=True, help="How far past 0 an interval may reach."
)
@click.option("--min-turns", default=100, show_default=True, help="Unseen labelled turns needed.")
@click.option("--dry-run", is_flag=True, help="Judge only; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def promote(
    name: str,
    pack_dir: Path | None,
    gate: float | None,
    margin: float,
    min_turns: int,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Make the pack's candidate head NAME the pinned one, only if on labelled turns neither
    trained on it is not worse: selective accuracy and coverage not lower, ECE not higher.
    Exit 1 when refused, saying which rule failed."""
    from bot.outcomes import OutcomeError
    from bot.outcomes import promotion as pr
    from bot.packs import load_pack

    root = pack_dir or Settings.from_env().pack
    pack = load_pack(root)
    pin = pack.heads.get(name)
    if not pin or not pin.get("candidate"):
        raise GatebotError(
            f"{root}: heads.{name} names no candidate (train one: gatebot heads "
            f"train --pack {root} --name {name} --candidate)"
        )
    gate = pack.gates.get(name, pack.gates["intent"]) if gate is None else gate
    store = _store()
    try:
        turns = store.labelled_turns(name)
    finally:
        store.close()
    a, b, left_out = pr.compare(
        turns,
        name,
        (pin["version"], root / pin["path"]),
        (pin["candidate_version"], root / pin["candidate"]),
        gate,
    )
    verdict = pr.judge(a, b, margin, min_turns)
    new_version, record = "", None
    if verdict.promoted and not dry_run:
        try:
            new_version = pr.promote_files(Path(root), name, pin)
        except OutcomeError as exc:
            raise GatebotError(str(exc)) from exc
        record = pr.write_record(Path(root), name, pin["version"], new_version, verdict, gate)
    summary = {
        **verdict.as_json(),
        "trained_on_left_out": left_out,
        "gate": gate,
        "pinned": pin["version"],
        "candidate": pin["candidate_version"],
        "new_version": new_version or None,
        "dry_run": dry_run,
    }
    if as_json:
        click.echo(json.dumps(summary))
    else:
        _print_verdict(name, summary, verdict, record)
    if not verdict.promoted:
        raise SystemExit(PROMOTION_EXIT)


def _held_out(turn_id: int, share: float) -> bool:
    """Whether a labelled turn is kept out of a candidate's training: a stable draw by its id,
    so training again never moves a turn promotion scored into the training set."""
    import hashlib

    digest = hashlib.sha256(f"turn:{turn_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < share


def train_candidate(pack_dir: Path, name: str, opts: Any, holdout: float) -> str:
    """Train the candidate: the pack's lines and the labelled turns not held out; write it to
    PACK/heads/NAME.candidate with the ids it trained on, pin it as the candidate; its version."""
    from bot.heads.train import train_head
    from bot.outcomes import OutcomeError
    from bot.outcomes.packpins import set_pin
    from bot.outcomes.promotion import TRAINED_ON
    from bot.packs import load_pack

    pack = load_pack(pack_dir)
    store = _store()
    try:
        labelled = store.labelled_turns(name)
    finally:
        store.close()
    used = [t for t in labelled if not _held_out(t.turn_id, holdout)]
    rows = pack.intent_lines() + [(str(t.record["message"]["text"]), t.label) for t in used]
    out = pack_dir / "heads" / f"{name}.candidate"
    out.mkdir(parents=True, exist_ok=True)
    ids = {"turns": [t.turn_id for t in used], "pack_lines": len(pack.intent_lines())}
    (out / TRAINED_ON).write_text(json.dumps(ids) + "\n", encoding="utf-8")
    try:
        head = train_head(rows, name, out, opts)
        relative = out.relative_to(pack_dir).as_posix()
        set_pin(
            pack_dir / "pack.yaml", name, {"candidate": relative, "candidate_version": head.version}
        )
    except (ValueError, OutcomeError) as exc:
        raise GatebotError(str(exc)) from exc
    click.echo(
        f"trained candidate {head.version} on {len(rows)} lines ({len(used)} labelled turns, "
        f"{len(labelled) - len(used)} held out for promotion); pinned as heads.{name}.candidate",
        err=True,
    )
    return head.version
