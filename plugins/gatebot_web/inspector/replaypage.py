"""The Replay page's HTML: the form, the running replay's progress, and the report rendered
from its JSON (every logged text through :func:`esc`; nothing of the report is markup)."""

from __future__ import annotations

from typing import Any

from gatebot_web.inspector.html import esc, pretty, url

STATE_WORDS = {
    "idle": "No replay has run in this process yet.",
    "running": "Replaying…",
    "done": "Finished.",
    "failed": "The replay failed.",
}


def replay_page(status: dict[str, Any], report: dict[str, Any] | None, pack: str) -> str:
    return (
        "<h1>Replay</h1><p class='hint'>Re-run logged conversations through a pack folder on the "
        "server and see which decisions change. Nothing is sent: tools and models answer from "
        "the log.</p>"
        + replay_form(pack, status["state"] == "running")
        + replay_status(status)
        + (report_body(report) if report is not None else "")
    )


def replay_form(pack: str, running: bool) -> str:
    disabled = " disabled" if running else ""
    return f"""<form class="replay" data-replay-form>
<label>Pack folder <input name="pack" size="50" required value="{esc(pack)}"></label>
<label>Conversations since <input type="date" name="since"></label>
<label>or these conversation ids <input name="conversations" size="40"
 placeholder="comma-separated"></label>
<button type="button" data-replay-start{disabled}>Start replay</button>
<span class="result error" role="alert"></span>
</form>"""


def replay_status(status: dict[str, Any]) -> str:
    state = status["state"]
    line = STATE_WORDS.get(state, state)
    if state != "idle":
        line += (
            f" {status['done']} of {status['conversations']} conversation(s) · pack "
            f"{esc(status['pack'])} · log {esc(status['source'])} · started by "
            f"{esc(status['staff'])} at {esc(status['started_at'])}"
        )
    error = f"<pre class='error'>{esc(status['error'])}</pre>" if status.get("error") else ""
    return (
        f'<p class="replay-status" data-replay-state="{esc(state)}" role="status">{line}</p>'
        + error
    )


def report_body(report: dict[str, Any]) -> str:
    totals = report["totals"]
    by = totals["by_decision"]
    counts = "".join(f"<th>{esc(k)}</th>" for k in by) + "</tr><tr>"
    counts += "".join(f"<td>{esc(v)}</td>" for v in by.values())
    changed = [t for t in report["turns"] if t["changed"]]
    turns = "".join(_turn(t) for t in changed) or "<p>No decision changed.</p>"
    return f"""<h2>Report</h2>
<p class="totals"><b>{totals["changed"]} of {totals["replayed"]} turn(s) changed</b> in
{totals["conversations"]} conversation(s); {totals["crossed_gates"]} gate crossing(s),
{totals["would_call"]} tool call(s) the log lacks, {totals["model_changed"]} model prompt(s)
changed, {totals["skipped"]} skipped · pack {esc(report["pack"])} ·
<a class="button" href="/inspector/api/replay/report.json" download>Download JSON</a></p>
<table class="list"><tr>{counts}</tr></table>{turns}"""


def _turn(t: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><th>{esc(name)}</th><td><pre>{pretty(c['before'])}</pre></td>"
        f"<td><pre>{pretty(c['after'])}</pre></td></tr>"
        for name, c in t["changes"].items()
    )
    notes = "".join(
        f"<li>{esc(c['head'])}: {esc(c['confidence'][1])} against {esc(c['gate'])} "
        f"{esc(c['threshold'][0])} → {esc(c['threshold'][1])}: {esc(c['outcome'][0])} → "
        f"{esc(c['outcome'][1])}</li>"
        for c in t["crossed"]
    )
    notes += "".join(f"<li>would call {esc(c['tool'])}</li>" for c in t["would_call"])
    if t["model_changed"]:
        notes += f"<li>model prompt changed: {esc(', '.join(t['model_changed']))}</li>"
    link = f'<a href="{esc(url("/inspector/conversations", t["conversation_id"]))}">'
    return (
        f'<section class="replayed-turn"><h3>{link}{esc(t["conversation_id"][:12])}</a> '
        f"#{esc(t['seq'])}</h3><p class='msg'>{esc(t['text'])}</p>"
        f"<table class='list'><tr><th></th><th>log</th><th>replay</th></tr>{rows}</table>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + "</section>"
    )
