"""A replay's report: per turn what changed, and the totals; as text, JSON and one HTML file."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any

from bot.replay.diff import DECISIONS, TurnDiff


@dataclass
class ReplayReport:
    pack: str  # the new pack: name and version
    source: str  # where the log came from
    turns: list[TurnDiff] = field(default_factory=list)
    conversations: int = 0

    @property
    def changed(self) -> list[TurnDiff]:
        return [t for t in self.turns if t.changed]

    def totals(self) -> dict[str, Any]:
        replayed = [t for t in self.turns if t.skipped is None]
        return {
            "conversations": self.conversations,
            "turns": len(self.turns),
            "replayed": len(replayed),
            "skipped": len(self.turns) - len(replayed),
            "changed": len(self.changed),
            "by_decision": {d: sum(d in t.changes for t in self.turns) for d in DECISIONS},
            "crossed_gates": sum(len(t.crossed) for t in self.turns),
            "would_call": sum(len(t.would_call) for t in self.turns),
            "model_changed": sum(len(t.model_changed) for t in self.turns),
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "source": self.source,
            "totals": self.totals(),
            "turns": [t.as_dict() for t in self.turns],
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"

    def to_text(self) -> str:
        lines = [f"replay of {self.source} against {self.pack}"]
        for t in self.changed:
            lines.append(f"\n{t.conversation_id} #{t.seq}  {_short(t.text)}")
            for name, change in t.changes.items():
                before, after = _trimmed(change["before"], change["after"])
                lines.append(f"  {name:<6} {_show(before)}")
                lines.append(f"  {'':<6} -> {_show(after)}")
            for c in t.crossed:
                lines.append(
                    f"  gate   {c['head']} {c['confidence'][1]} vs {c['gate']} "
                    f"{c['threshold'][0]} -> {c['threshold'][1]}: "
                    f"{c['outcome'][0]} -> {c['outcome'][1]}"
                )
            for c in t.would_call:
                lines.append(f"  would  call {c['tool']} {_show(c['arguments'])}")
            if t.model_changed:
                lines.append(f"  model  prompt changed ({', '.join(t.model_changed)})")
        totals = self.totals()
        by = ", ".join(f"{k} {v}" for k, v in totals["by_decision"].items() if v)
        lines.append(
            f"\n{totals['changed']} of {totals['replayed']} turn(s) changed in "
            f"{totals['conversations']} conversation(s)"
            + (f" ({by})" if by else "")
            + f"; {totals['would_call']} tool call(s) the log lacks (would call), "
            f"{totals['model_changed']} model prompt(s) changed, {totals['skipped']} skipped"
        )
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        """One self-contained page (no script, no link out); every logged text escaped."""
        totals = self.totals()
        rows = "".join(_turn_html(t) for t in self.changed) or "<p>No decision changed.</p>"
        counts = totals["by_decision"]
        by = (
            "<tr><th>turns changed in</th>"
            + "".join(f"<th>{_e(k)}</th>" for k in counts)
            + "</tr><tr><td></td>"
            + "".join(f"<td>{v}</td>" for v in counts.values())
            + "</tr>"
        )
        return PAGE.format(
            title=_e(f"gatebot replay: {self.pack}"),
            source=_e(self.source),
            pack=_e(self.pack),
            summary=_e(
                f"{totals['changed']} of {totals['replayed']} turn(s) changed in "
                f"{totals['conversations']} conversation(s); {totals['would_call']} would-call, "
                f"{totals['model_changed']} model prompt(s) changed, {totals['skipped']} skipped"
            ),
            by=by,
            rows=rows,
        )


def _short(text: str, n: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _trimmed(before: Any, after: Any, keep: int = 30) -> tuple[Any, Any]:
    """Two texts from a little before where they first differ, so the change is in view."""
    if not (isinstance(before, str) and isinstance(after, str)):
        return before, after
    same = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), 0)
    if same <= keep:
        return before, after
    return "…" + before[same - keep :], "…" + after[same - keep :]


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(_short(value, 100))
    return json.dumps(value, ensure_ascii=False)


def _e(value: Any) -> str:
    return html.escape(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _turn_html(t: TurnDiff) -> str:
    cells = "".join(
        f"<tr><th>{_e(name)}</th><td class=b>{_e(c['before'])}</td>"
        f"<td class=a>{_e(c['after'])}</td></tr>"
        for name, c in t.changes.items()
    )
    gates = "".join(
        f"<li>{_e(c['head'])} {_e(c['confidence'][1])} against {_e(c['gate'])} "
        f"{_e(c['threshold'][0])} → {_e(c['threshold'][1])}: "
        f"{_e(c['outcome'][0])} → {_e(c['outcome'][1])}</li>"
        for c in t.crossed
    )
    notes = "".join(
        f"<li>would call {_e(c['tool'])} {_e(c['arguments'])}</li>" for c in t.would_call
    ) + (
        f"<li>model prompt changed: {_e(', '.join(t.model_changed))}</li>"
        if t.model_changed
        else ""
    )
    return (
        f"<section><h2>{_e(t.conversation_id)} #{t.seq}</h2><p class=msg>{_e(t.text)}</p>"
        f"<table><tr><th></th><th>log</th><th>replay</th></tr>{cells}</table>"
        + (f"<ul>{gates}{notes}</ul>" if gates or notes else "")
        + "</section>"
    )


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{title}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin: .5em 0; }}
th, td {{ border: 1px solid #ccc; padding: .25em .5em; text-align: left; vertical-align: top; }}
td {{ white-space: pre-wrap; max-width: 40em; }}
td.b {{ background: #fdecea; }} td.a {{ background: #e8f5e9; }}
section {{ border-top: 2px solid #eee; margin-top: 1em; }}
.msg {{ font-style: italic; }}
</style></head><body>
<h1>{title}</h1>
<p>Log: {source}<br>Pack: {pack}</p>
<p><strong>{summary}</strong></p>
<table>{by}</table>
{rows}
</body></html>
"""
