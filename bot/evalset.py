"""A pack's own paraphrase set: customer messages with what should happen, scored turn by turn.

Each line of the set (JSON) is ``{"text", "kind", ...}``, one fresh conversation per line:

- ``answer`` with ``keys``: a cited fact whose key is (or starts a section of) one of ``keys``;
  citing anything else is a wrong source.
- ``unanswerable``: no fact asserted (nothing cited), and not declined: a question in the
  pack's scope that it does not answer is told so, not turned away as off-topic (declined, it
  is safe: nothing wrong said).
- ``out_of_scope``: declined, with no model call.
- ``person``: handed off.
- ``action`` with ``flow``: that flow started, or the playbook works toward the outcome of that
  name (``legal.outcome``: "I'd love a live walkthrough" read as a demo request is qualified as a
  demo lead by the playbook, as the demo flow would, and delivered to the same desk).
- ``non_english`` with ``keys``: right when it cites one of ``keys``, safe when it cites nothing,
  wrong when it cites anything else (an unrelated passage is never acceptable).
- ``lookalike``: a message that names a person, a refund or seats but asks for neither ("what is
  your refund policy", "can someone with the manager role see billing?"): right when nothing is
  handed off, no flow starts and no outcome is pursued, wrong when any of them happens.

A line may carry ``before``: messages sent first in the same conversation (a follow-up such as
"is it encrypted?" after "where is my data stored?"); only the last turn is scored.

The set is data about one pack, so it lives with the pack's tests; ``gatebot evalset`` runs it.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.errors import ConfigError

KINDS = (
    "answer",
    "unanswerable",
    "out_of_scope",
    "person",
    "action",
    "non_english",
    "lookalike",
)


@dataclass
class Case:
    text: str
    kind: str
    keys: list[str] = field(default_factory=list)
    flow: str | None = None
    before: list[str] = field(default_factory=list)  # sent first, in the same conversation


def load_set(path: Path) -> list[Case]:
    """The set's lines; a bad line is an error naming its line number."""
    cases = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            keys, before = list(raw.get("keys", [])), [str(t) for t in raw.get("before", [])]
            case = Case(raw["text"], raw["kind"], keys, raw.get("flow"), before)
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ConfigError(f"{path}:{n}: not a case ({exc})") from exc
        if case.kind not in KINDS:
            raise ConfigError(f"{path}:{n}: kind {case.kind!r} is not one of {', '.join(KINDS)}")
        cases.append(case)
    return cases


def _cited(record: Mapping[str, Any], replies: list[dict[str, Any]]) -> list[str]:
    keys = [c["key"] for r in replies for c in r.get("citations", [])]
    return keys or [f["key"] for f in record["facts"] if record["move"]["name"] == "answer"]


def _matches(key: str, wanted: list[str]) -> bool:
    return any(key == w or key.startswith(w + "#") for w in wanted)


def verdict(case: Case, record: Mapping[str, Any], replies: list[dict[str, Any]]) -> str:
    """``right``, ``safe`` (nothing wrong said, the goal not reached) or ``wrong``."""
    move = record["move"]["name"]
    cited = _cited(record, replies)
    if case.kind in ("answer", "non_english"):
        if cited and all(_matches(k, case.keys) for k in cited):
            return "right"
        return "wrong" if cited else "safe"
    if case.kind == "unanswerable":
        return "wrong" if cited else ("safe" if move == "decline" else "right")
    if case.kind == "out_of_scope":
        declined = move == "decline" and not record["model_calls"]
        return "right" if declined else ("wrong" if cited else "safe")
    if case.kind == "person":
        return "right" if move == "handoff" else "safe"
    flow = record["flow"]
    pursued = record["legal"].get("outcome")  # absent from records before 2026-12-03
    if case.kind == "lookalike":
        return "wrong" if move == "handoff" or flow or pursued else "right"
    started = (flow["name"] if flow else None, pursued)
    return "right" if case.flow is not None and case.flow in started else "safe"


@dataclass
class Scores:
    """Counts of right, safe and wrong per kind, and the misses to look at."""

    counts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    misses: list[tuple[str, str, str]] = field(default_factory=list)  # kind, verdict, text

    def add(self, case: Case, result: str) -> None:
        self.counts[case.kind][result] += 1
        if result != "right":
            self.misses.append((case.kind, result, case.text))

    def share(self, kind: str, result: str = "right") -> float:
        counts = self.counts.get(kind, Counter())
        total = sum(counts.values())
        return counts[result] / total if total else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "kinds": {
                kind: {**dict(counts), "n": sum(counts.values())}
                for kind, counts in sorted(self.counts.items())
            },
            "misses": [{"kind": k, "verdict": v, "text": t} for k, v, t in self.misses],
        }


async def run_set(
    agent: Any,
    store: Any,
    cases: list[Case],
    progress: Callable[[list[Case]], Iterable[Case]] = iter,
) -> Scores:
    """Each case in a conversation of its own, through the agent's whole turn; ``progress``
    wraps the cases (a command passes a progress bar)."""
    scores = Scores()
    for n, case in enumerate(progress(cases)):
        conv, _ = store.create_conversation("evalset", external_id=f"evalset-{n}")
        for m, earlier in enumerate(case.before):
            await agent.handle(conv, earlier, f"evalset-{n}-before-{m}")
        result = await agent.handle(conv, case.text, f"evalset-{n}")
        scores.add(case, verdict(case, result.record, result.replies))
    return scores
