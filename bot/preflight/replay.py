"""Replaying a labelled set of messages through pre-flight, to catch a decision that changed.

A labels file is JSONL, one message a line: ``{"id": "...", "text": "...", "decision":
"faq:faq-trial", "answers": {"person": false, "language": "en"}}``. ``decision`` (``none``,
``faq:KEY``, ``flow:NAME``, ``person:DESK``) and ``answers`` (any of the seven questions) are
both optional; whatever is given is compared. Each run's decisions are kept, and the next run
compares with them: a pack edit, a new head or another model that changes any decision shows up
as a change, whatever the labels say.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.errors import GatebotError
from bot.packs import Pack
from bot.preflight.answers import QUESTIONS
from bot.preflight.route import choose
from bot.preflight.stage import Preflight
from bot.preflight.viamodel import PreflightFailed
from bot.turn.scope import check_scope


class LabelsError(GatebotError):
    """A labels file that cannot be read; the message names the line."""


@dataclass
class Case:
    id: str
    text: str
    decision: str | None = None
    answers: dict[str, Any] = field(default_factory=dict)


def read_labels(path: Path) -> list[Case]:
    cases: list[Case] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LabelsError(f"{path}:{n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            raise LabelsError(f'{path}:{n}: each line needs a "text" string')
        unknown = set(row.get("answers", {})) - set(QUESTIONS)
        if unknown:
            raise LabelsError(f"{path}:{n}: unknown question(s) {sorted(unknown)}")
        cases.append(
            Case(str(row.get("id", n)), row["text"], row.get("decision"), row.get("answers", {}))
        )
    return cases


async def run_cases(
    pack: Pack,
    preflight: Preflight,
    cases: list[Case],
    progress: Callable[[list[Case]], Iterable[Case]] = iter,
) -> list[dict[str, Any]]:
    """Each case's decision and answers, as a live turn would decide (scope check included);
    ``progress`` wraps the cases (a command passes a progress bar)."""
    out = []
    for case in progress(cases):
        row: dict[str, Any] = {"id": case.id, "text": case.text}
        try:
            answers = await preflight.answers(case.text, [])
        except PreflightFailed as exc:
            row.update(decision="failed", error=str(exc), answers={})
        else:
            scope = check_scope(pack, case.text, set())["verdict"]
            row["decision"] = choose(pack, answers, scope).label
            row["answers"] = {
                a.question: {"answer": a.answer, "confidence": a.confidence, "above": a.above}
                for a in answers
            }
        row["label_mismatches"] = _mismatches(case, row)
        out.append(row)
    return out


def _mismatches(case: Case, row: dict[str, Any]) -> list[str]:
    found = []
    if case.decision is not None and case.decision != row["decision"]:
        found.append(f"decision: expected {case.decision}, got {row['decision']}")
    for question, expected in case.answers.items():
        got = row["answers"].get(question, {}).get("answer")
        if got != expected:
            found.append(f"{question}: expected {expected!r}, got {got!r}")
    return found


def compare(rows: list[dict[str, Any]], previous: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Decisions that differ from the previous run's (by case id; new cases are not changes)."""
    if not previous:
        return []
    before = {r["id"]: r["decision"] for r in previous.get("decisions", [])}
    return [
        {"id": r["id"], "text": r["text"], "previous": before[r["id"]], "now": r["decision"]}
        for r in rows
        if r["id"] in before and before[r["id"]] != r["decision"]
    ]


def build_report(
    pack: Pack,
    model: str,
    rows: list[dict[str, Any]],
    previous: dict[str, Any] | None,
    previous_path: Path,
) -> dict[str, Any]:
    changed = compare(rows, previous)
    return {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "pack": {"name": pack.name, "version": pack.version},
        "model": model,
        "cases": len(rows),
        "label_agreement": sum(not r["label_mismatches"] for r in rows),
        "label_mismatches": [
            {"id": r["id"], "text": r["text"], "mismatches": r["label_mismatches"]}
            for r in rows
            if r["label_mismatches"]
        ],
        "previous": {
            "path": str(previous_path),
            "found": previous is not None,
            "pack_version": (previous or {}).get("pack", {}).get("version"),
        },
        "changed": changed,
        "decisions": rows,
    }


def render_text(report: dict[str, Any]) -> str:
    lines = [
        f"pre-flight replay of {report['cases']} message(s) on pack {report['pack']['name']} "
        f"{report['pack']['version']} with model {report['model']}",
        f"agrees with the labels on {report['label_agreement']} of {report['cases']}",
    ]
    prev = report["previous"]
    if not prev["found"]:
        lines.append(f"no previous run at {prev['path']}: nothing to compare decisions with")
    elif report["changed"]:
        lines.append(f"{len(report['changed'])} decision(s) changed since the previous run:")
        lines += [
            f"  [{c['id']}] {c['previous']} -> {c['now']}: {c['text']}" for c in report["changed"]
        ]
    else:
        lines.append("no decision changed since the previous run")
    for m in report["label_mismatches"]:
        lines.append(f"  label [{m['id']}] {'; '.join(m['mismatches'])}: {m['text']}")
    return "\n".join(lines) + "\n"
