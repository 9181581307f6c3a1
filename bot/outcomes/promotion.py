"""The gate a candidate head passes to replace the pinned one.

On labelled turns neither head trained on, where both read (the pinned head acting, the candidate
in the shadow), the candidate is promoted only when, for each metric, it is not worse: its point
estimate is not worse than the pinned head's, and the 95% paired-bootstrap interval of the
difference does not reach past the margin on the worse side (selective accuracy and coverage not
lower, ECE not higher). Promotion moves the candidate's files into the pinned folder, rewrites the
pin in ``pack.yaml`` and writes ``heads/NAME.promotion.json`` beside the head: the numbers and the
rules, so the pin's history says why it changed.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.heads import content_version
from bot.outcomes import OutcomeError
from bot.outcomes.evaluation import METRICS, Readings, paired_differences, readings
from bot.outcomes.packpins import set_pin
from bot.store import LabelledTurn

#: The file beside a candidate's head files naming the labelled turns it trained on.
TRAINED_ON = "trained_on.json"
#: Higher is better for these; lower for the rest (ECE).
HIGHER_IS_BETTER = {"selective_accuracy", "coverage"}
DEFAULT_MARGIN = 0.02
DEFAULT_MIN_TURNS = 100


@dataclass
class Verdict:
    promoted: bool
    turns: int
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    reason: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "promoted": self.promoted,
            "turns": self.turns,
            "rules": self.rules,
            "failed": self.failed,
            "reason": self.reason,
        }


def trained_on(folder: Path) -> set[int]:
    """The labelled turn ids a head folder says it trained on (none for a head from the pack)."""
    path = folder / TRAINED_ON
    if not path.is_file():
        return set()
    return {int(t) for t in json.loads(path.read_text(encoding="utf-8")).get("turns", [])}


def judge(
    pinned: Readings, candidate: Readings, margin: float, min_turns: int, seed: int = 0
) -> Verdict:
    """Apply the three rules to the turns both read; a rule's line says its numbers."""
    both = sorted(set(pinned.turn_ids) & set(candidate.turn_ids))
    if len(both) < min_turns:
        return Verdict(
            False,
            len(both),
            reason=f"only {len(both)} unseen labelled turns both heads read; "
            f"at least {min_turns} are needed",
        )
    diffs = paired_differences(pinned.subset(both), candidate.subset(both), seed=seed)
    verdict = Verdict(True, len(both))
    for name in METRICS:
        d = diffs[name]
        better = name in HIGHER_IS_BETTER
        lo, hi = d["ci"]
        point_ok = d["difference"] >= 0 if better else d["difference"] <= 0
        ci_ok = lo >= -margin if better else hi <= margin
        d["passed"] = point_ok and ci_ok
        d["rule"] = (
            f"{name} not {'lower' if better else 'higher'} "
            f"(interval's {'low' if better else 'high'} end within {margin})"
        )
        verdict.rules[name] = d
        if not d["passed"]:
            verdict.failed.append(name)
    verdict.promoted = not verdict.failed
    if verdict.failed:
        verdict.reason = "failed: " + ", ".join(verdict.rules[n]["rule"] for n in verdict.failed)
    return verdict


def compare(
    turns: list[LabelledTurn],
    head: str,
    pinned: tuple[str, Path],
    candidate: tuple[str, Path],
    gate: float,
) -> tuple[Readings, Readings, int]:
    """(pinned readings, candidate readings, turns left out as trained on) on the labelled turns
    neither head trained on."""
    seen = trained_on(pinned[1]) | trained_on(candidate[1])
    unseen = [t for t in turns if t.turn_id not in seen]
    a = readings(unseen, head, pinned[0], gate, "reads")
    b = readings(unseen, head, candidate[0], gate, "shadow")
    return a, b, len(turns) - len(unseen)


def promote_files(pack_root: Path, name: str, pin: dict[str, str]) -> str:
    """Move the candidate's files into the pinned folder and rewrite the pin; the new version."""
    source, target = pack_root / pin["candidate"], pack_root / pin["path"]
    if not (source / "config.json").is_file():
        raise OutcomeError(f"no candidate head at {pin['candidate']}")
    staged = target.with_name(target.name + ".promoting")
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(source, staged)
    backup = target.with_name(target.name + ".previous")
    shutil.rmtree(backup, ignore_errors=True)
    if target.exists():
        target.rename(backup)
    staged.rename(target)
    version = content_version(target, name)
    fields: dict[str, str | None] = {"version": version, "candidate": None}
    set_pin(pack_root / "pack.yaml", name, {**fields, "candidate_version": None})
    shutil.rmtree(source)
    shutil.rmtree(backup, ignore_errors=True)  # the record keeps the version it replaced
    return version


def write_record(
    pack_root: Path, name: str, before: str, after: str, verdict: Verdict, gate: float
) -> Path:
    """``heads/NAME.promotion.json``: this promotion first, the earlier ones after it."""
    path = pack_root / "heads" / f"{name}.promotion.json"
    history: list[dict[str, Any]] = []
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8"))
        history = [old.get("latest", {}), *old.get("history", [])]
    latest = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "from": before,
        "to": after,
        "gate": gate,
        **verdict.as_json(),
    }
    path.write_text(json.dumps({"latest": latest, "history": history}, indent=1) + "\n")
    return path
