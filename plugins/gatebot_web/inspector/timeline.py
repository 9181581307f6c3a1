"""A conversation's timeline, drawn only from its stored messages and turn records.

Every read of a record goes through :func:`_dict` / :func:`_list`, so a record an older version
wrote (a key missing, a part of another shape) still renders, showing a dash where it has nothing.
"""

from __future__ import annotations

from typing import Any

from bot.heads import NONE
from bot.store import Message, Turn
from gatebot_web.inspector.html import bar, esc, json_block, number, url, when


def _dict(record: Any, key: str) -> dict[str, Any]:
    value = record.get(key) if isinstance(record, dict) else None
    return value if isinstance(value, dict) else {}


def _list(record: Any, key: str) -> list[Any]:
    value = record.get(key) if isinstance(record, dict) else None
    return value if isinstance(value, list) else []


def _section(title: str, inner: str, css: str = "") -> str:
    return f'<section class="part {css}"><h4>{esc(title)}</h4>{inner}</section>'


def reads(record: dict[str, Any]) -> str:
    rows = []
    for read in _list(record, "reads"):
        r = read if isinstance(read, dict) else {}
        outcome = str(r.get("outcome", ""))
        why = f' <span class="why">{esc(r["reason"])}</span>' if r.get("reason") else ""
        rows.append(
            f'<tr class="read {esc(outcome)}"><td>{esc(r.get("head"))}</td>'
            f"<td>{esc(r.get('answer'))}</td>"
            f"<td>{bar(r.get('confidence'), r.get('threshold'), outcome)}</td>"
            f"<td>{number(r.get('confidence'))} / {esc(r.get('gate'))} "
            f"{number(r.get('threshold'))}</td><td>{esc(outcome)}{why}</td></tr>"
        )
    if not rows:
        return _section("Reads", '<p class="none">no reads recorded</p>')
    head = "<tr><th>head</th><th>answer</th><th>confidence</th><th>vs gate</th><th></th></tr>"
    return _section("Reads", f'<table class="reads">{head}{"".join(rows)}</table>')


def scope(record: dict[str, Any]) -> str:
    s = _dict(record, "scope")
    score, threshold = s.get("score"), s.get("threshold")
    drawn = bar(score, threshold, str(s.get("verdict") or "")) if score is not None else ""
    return _section(
        "Scope",
        f"<p><b>{esc(s.get('verdict'))}</b> by {esc(s.get('rule'))}; score {number(score)} "
        f"against threshold {number(threshold)} {drawn}</p>",
    )


def decision(record: dict[str, Any]) -> str:
    legal, move = _dict(record, "legal"), _dict(record, "move")
    moves = ", ".join(esc(m) for m in _list(legal, "moves")) or "—"
    escalate = ' <span class="badge esc">escalate</span>' if move.get("escalate") else ""
    # An older record has no outcome; a turn that works toward none says nothing of one.
    toward = f"; toward <b>{esc(legal['outcome'])}</b>" if legal.get("outcome") else ""
    return _section(
        "Decision",
        f"<p>legal: {moves} <span class='why'>(rule {esc(legal.get('rule'))}){toward}</span></p>"
        f"<p>move: <b>{esc(move.get('name'))}</b>{escalate} — "
        f"<span class='why'>{esc(move.get('why'))}</span></p>",
    )


def values(record: dict[str, Any]) -> str:
    items = []
    for v in _list(record, "values"):
        v = v if isinstance(v, dict) else {}
        rejected = "; ".join(
            f"{esc(r.get('value'))}: {esc(r.get('reason'))}"
            for r in _list(v, "rejected")
            if isinstance(r, dict)
        )
        items.append(
            f"<li>{esc(v.get('slot'))} = <code>{esc(v.get('value'))}</code> "
            f"({esc(v.get('source'))}, {esc(v.get('outcome'))})"
            + (f" <span class='why'>rejected {rejected}</span>" if rejected else "")
            + "</li>"
        )
    return _section("Values", f"<ul>{''.join(items)}</ul>") if items else ""


def facts(record: dict[str, Any]) -> str:
    items = []
    for f in _list(record, "facts"):
        f = f if isinstance(f, dict) else {}
        key = f.get("key")
        link = f'<a href="{url("/inspector/passages", key)}">{esc(key)}</a>' if key else esc(key)
        items.append(
            f"<li>{link} <span class='why'>{esc(f.get('source'))} · "
            f"{esc(f.get('mode'))}</span></li>"
        )
    return _section("Facts cited", f"<ul>{''.join(items)}</ul>") if items else ""


def reply_gate(record: dict[str, Any]) -> str:
    reply = _dict(record, "reply")
    gate = _dict(reply, "gate")
    passed = gate.get("passed")
    verdict = {True: "passed", False: "refused", None: "not gated"}.get(passed, esc(passed))
    rules = _list(gate, "rules")
    reasons = "".join(
        f"<li>{esc(reason)}"
        + (f" <span class='why'>({esc(rules[i])})</span>" if i < len(rules) else "")
        + "</li>"
        for i, reason in enumerate(_list(gate, "reasons"))
    )
    return _section(
        "Reply gate",
        f"<p class='gate-{verdict.replace(' ', '-')}'><b>{verdict}</b> after "
        f"{esc(reply.get('attempts'))} attempt(s)</p><ul>{reasons}</ul>"
        f"<blockquote>{esc(reply.get('text'))}</blockquote>",
    )


def tools(record: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{esc(t.get('tool'))}</td><td>{esc(t.get('event'))}</td>"
        f"<td>{json_block(t.get('detail'), 'detail')}</td></tr>"
        for t in _list(record, "tools")
        if isinstance(t, dict)
    )
    return _section("Tool events", f"<table>{rows}</table>") if rows else ""


def model_calls(record: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{esc(c.get('provider'))}/{esc(c.get('model'))}</td>"
        f"<td>{esc(c.get('purpose'))}</td><td>{number(c.get('ms'), 1)} ms</td>"
        f"<td>{esc(c.get('tokens_in'))} in / {esc(c.get('tokens_out'))} out</td>"
        f"<td class='error'>{esc(c.get('error')) if c.get('error') else ''}</td></tr>"
        for c in _list(record, "model_calls")
        if isinstance(c, dict)
    )
    return _section("Model calls", f"<table>{rows}</table>") if rows else ""


def preflight(record: dict[str, Any]) -> str:
    p = _dict(record, "preflight")
    if not p or p.get("mode") in (None, "off"):
        return ""
    answers = _list(p, "answers")
    error = f"<p class='error'>{esc(p['error'])}</p>" if p.get("error") else ""
    return _section(
        "Pre-flight",
        f"<p>mode {esc(p.get('mode'))}: decision <b>{esc(p.get('decision'))}</b>, "
        f"{number(p.get('ms'), 1)} ms</p><p>{esc(p.get('sentence'))}</p>{error}"
        + (json_block(answers, f"{len(answers)} answer(s)") if answers else ""),
    )


def flow_step(record: dict[str, Any]) -> str:
    flow = _dict(record, "flow")
    if not flow:
        return ""
    run = flow.get("run")
    link = f'<a href="{url("/inspector/runs", run)}">run {esc(run)}</a>' if run else ""
    return _section(
        "Flow",
        f"<p>{esc(flow.get('name'))} at step <b>{esc(flow.get('step'))}</b> "
        f"({esc(flow.get('status'))}) {link}</p>",
    )


PARTS = (
    preflight,
    scope,
    reads,
    values,
    decision,
    facts,
    flow_step,
    reply_gate,
    tools,
    model_calls,
)


def label_form(turn: Turn, record: dict[str, Any], choices: list[str], label: str | None) -> str:
    """Staff confirm or correct the turn's intent: a menu of the pack's intents (and ``none``)
    showing the stored label, else what the intent head read; inspector.js posts it."""
    if turn.id is None or not choices:
        return ""
    read = next(
        (r for r in _list(record, "reads") if isinstance(r, dict) and r.get("head") == "intent"), {}
    )
    shown = label or str(read.get("answer") or "")
    options = "".join(
        f'<option value="{esc(c)}"{" selected" if c == shown else ""}>{esc(c)}</option>'
        for c in [*choices, NONE]
    )
    state = f"labelled {esc(label)}" if label else "not labelled"
    return (
        f'<form class="label-turn" data-turn="{turn.id}"><label>Intent <select name="intent">'
        f'{options}</select></label> <button type="button" data-label>Save label</button> '
        f'<span class="result" role="status">{state}</span></form>'
    )


def turn_card(turn: Turn, choices: list[str] | None = None, label: str | None = None) -> str:
    record = turn.record if isinstance(turn.record, dict) else {}
    message = _dict(record, "message")
    move = _dict(record, "move")
    total = _dict(record, "timings").get("total_ms", turn.total_ms)
    flags = "".join(
        f' <span class="badge {css}">{label}</span>'
        for css, label, on in (
            ("esc", "escalated", move.get("escalate")),
            ("unsure", "unsure read", turn.unsure),
            ("refused", "reply refused", turn.refused),
        )
        if on
    )
    parts = "".join(part(record) for part in PARTS)
    return (
        f'<article class="turn" id="turn-{turn.seq}" data-seq="{turn.seq}">'
        f"<h3>Turn {turn.seq}: <q>{esc(message.get('text'))}</q> → "
        f"<b>{esc(move.get('name'))}</b>{flags} <span class='why'>{number(total, 1)} ms</span></h3>"
        f"{label_form(turn, record, choices or [], label)}"
        f"<details class='parts' open>{'<summary>decision</summary>'}{parts}</details></article>"
    )


def timeline(
    messages: list[Message],
    turns: list[Turn],
    choices: list[str] | None = None,
    labels: dict[int, str] | None = None,
) -> str:
    """Messages in order; each customer message followed by its turn's card, with a form to
    label the turn's intent when ``choices`` (the pack's intents) are given."""
    by_message = {t.message_id: t for t in turns}
    labels = labels or {}
    out: list[str] = []
    for m in messages:
        turn = by_message.get(m.id or -1)
        if turn is not None:
            out.append(turn_card(turn, choices, labels.get(turn.id or -1)))
            continue
        who = esc(m.author) if m.role == "staff" else esc(m.role)
        out.append(
            f'<div class="msg {esc(m.role)}" data-role="{esc(m.role)}"><span class="who">{who}'
            f"</span> {esc(m.text)} <span class='why'>{when(m.created_at)}</span></div>"
        )
    return "".join(out)
