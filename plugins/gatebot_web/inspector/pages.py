"""The bodies of the list, conversation, escalation and passage pages."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from bot.outcomes import KINDS
from bot.store import Escalation
from bot.store.inspect import ConversationRow, Dossier
from gatebot_web.inspector.graph import run_links
from gatebot_web.inspector.html import esc, url, when
from gatebot_web.inspector.timeline import timeline

FILTER_KEYS = ("channel", "status", "outcome", "since", "until", "q")
FLAG_KEYS = (("escalated", "escalated"), ("unsure", "unsure reads"), ("refused", "reply refused"))


def filter_form(query: dict[str, str], channels: list[str]) -> str:
    options = "".join(
        f'<option value="{esc(c)}"{" selected" if query.get("channel") == c else ""}>{esc(c)}'
        "</option>"
        for c in channels
    )
    flags = "".join(
        f'<label><input type="checkbox" name="{key}" value="1"'
        f"{' checked' if query.get(key) else ''}> {label}</label>"
        for key, label in FLAG_KEYS
    )
    return f"""<form class="filters" method="get" action="/inspector">
<label>Channel <select name="channel"><option value="">any</option>{options}</select></label>
{flags}
<label>Status <input name="status" size="9" value="{esc(query.get("status", ""))}"></label>
<label>Outcome <input name="outcome" size="9" value="{esc(query.get("outcome", ""))}"></label>
<label>From <input type="date" name="since" value="{esc(query.get("since", ""))}"></label>
<label>To <input type="date" name="until" value="{esc(query.get("until", ""))}"></label>
<label>Text <input type="search" name="q" value="{esc(query.get("q", ""))}"></label>
<button type="submit">Filter</button> <a href="/inspector">clear</a>
</form>"""


def conversation_list(
    rows: list[ConversationRow], total: int, page: int, per_page: int, query: dict[str, str]
) -> str:
    body = "".join(
        f'<tr class="conv" data-id="{esc(r.id)}"><td><a href="'
        f'{url("/inspector/conversations", r.id)}">{esc(r.id[:12])}</a></td>'
        f"<td>{esc(r.channel)}</td><td>{esc(r.status)}{' (paused)' if r.paused else ''}</td>"
        f"<td>{r.turn_count}</td><td>{'yes' if r.escalated else ''}</td>"
        f"<td>{esc((r.first_message or '')[:80])}</td><td>{when(r.updated_at)}</td></tr>"
        for r in rows
    )
    head = (
        "<tr><th>conversation</th><th>channel</th><th>status</th><th>turns</th>"
        "<th>escalated</th><th>first message</th><th>last active</th></tr>"
    )
    last = max(1, -(-total // per_page))
    kept = {k: v for k, v in query.items() if k != "page" and v}

    def link(n: int, label: str) -> str:
        return f'<a href="/inspector?{esc(urlencode({**kept, "page": n}))}">{label}</a>'

    pager = (
        (link(page - 1, "← newer") if page > 1 else "")
        + f' <span class="pages">page {page} of {last} · {total} conversation(s)</span> '
        + (link(page + 1, "older →") if page < last else "")
    )
    return f'<table class="list">{head}{body}</table><p class="pager">{pager}</p>'


def escalation_controls(esc_row: Escalation) -> str:
    """Take over, hand back, resolve with an outcome kind (recorded as the conversation's outcome
    label) and a reply box; inspector.js posts them."""
    kinds = "".join(
        f'<option value="{k}"{" selected" if k == "resolved" else ""}>{k}</option>' for k in KINDS
    )
    return f"""<div class="esc-actions" data-escalation="{esc_row.id}">
<button type="button" data-verb="take_over">Take over</button>
<button type="button" data-verb="hand_back">Hand back</button>
<label>Outcome <select name="outcome">{kinds}</select></label>
<button type="button" data-verb="resolve">Resolve</button>
<textarea name="text" rows="2" placeholder="Reply to the customer"></textarea>
<button type="button" data-verb="reply">Send reply</button>
<span class="result" role="status"></span></div>"""


def escalation_rows(rows: list[Escalation], controls: bool = True) -> str:
    body = "".join(
        f'<tr class="escalation" data-id="{e.id}"><td>#{e.id}</td>'
        f'<td><a href="{url("/inspector/conversations", e.conversation_id)}">'
        f"{esc(e.conversation_id[:12])}</a></td><td>{esc(e.kind)}</td><td>{esc(e.reason)}</td>"
        f"<td>{esc(e.helpdesk)}</td><td class='status'>{esc(e.status)}</td>"
        f"<td>{esc(e.staff)}</td><td>{esc(e.outcome)}</td><td>{esc(e.delivery)}</td>"
        f"<td>{when(e.created_at)}</td>"
        f"<td>{escalation_controls(e) if controls else ''}</td></tr>"
        for e in rows
    )
    head = (
        "<tr><th>#</th><th>conversation</th><th>kind</th><th>reason</th><th>desk</th>"
        "<th>status</th><th>staff</th><th>outcome</th><th>delivery</th><th>opened</th><th></th></tr>"
    )
    return f'<table class="list escalations">{head}{body}</table>'


def outcome_list(d: Dossier) -> str:
    items = "".join(
        f"<li><b>{esc(o.kind)}</b> from {esc(o.source)}"
        f"{' by ' + esc(o.staff) if o.staff else ''} · {when(o.created_at)}</li>"
        for o in d.outcomes
    )
    return f'<h2>Outcomes</h2><ul class="outcomes">{items}</ul>' if items else ""


def conversation_page(d: Dossier, choices: list[str] | None = None) -> str:
    """The conversation, its escalations and outcome labels, and its timeline; ``choices`` (the
    pack's intents) give each turn a form to label its intent."""
    conv = d.conversation
    export = url("/inspector/api/conversations", conv.id, "export")
    runs = f"<p>Flow runs: {run_links(d.runs)}</p>" if d.runs else ""
    escalations = f"<h2>Escalations</h2>{escalation_rows(d.escalations)}" if d.escalations else ""
    return f"""<h1>Conversation {esc(conv.id)}</h1>
<p>{esc(conv.channel)} · <b>{esc(conv.status)}</b>{" · paused for staff" if conv.paused else ""}
· {conv.turn_count} turn(s) · language {esc(conv.language)} · started {when(conv.created_at)}
· <a class="button" href="{export}" download="conversation-{esc(conv.id)}.json">Export JSON</a></p>
{runs}{escalations}{outcome_list(d)}<h2>Timeline</h2>
<div class="timeline">{timeline(d.messages, d.turns, choices, d.labels)}</div>"""


def passage_page(key: str, found: list[Any]) -> str:
    if not found:
        return f"<h1>{esc(key)}</h1><p>No stored passage has this key (the pack changed?).</p>"
    shown = "".join(
        f"<article class='passage'><h2>{esc(p.title)}</h2><p class='why'>{esc(p.pack)} · "
        f"{esc(p.kind)} · {esc(p.source)}</p><p>{esc(p.text)}</p></article>"
        for p in found
    )
    return f"<h1>Passage {esc(key)}</h1>{shown}"
