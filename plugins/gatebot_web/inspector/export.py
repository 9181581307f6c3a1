"""A conversation with everything stored about it, as JSON: the inspector's export (for a bug
report) and its list's JSON. Turn records go out as stored, whatever version wrote them."""

from __future__ import annotations

from typing import Any

from bot.flows import service
from bot.store.inspect import ConversationRow, Dossier

FORMAT = "gatebot.conversation-export/1"


def row_json(r: ConversationRow) -> dict[str, Any]:
    return {
        "id": r.id,
        "channel": r.channel,
        "status": r.status,
        "paused": r.paused,
        "turn_count": r.turn_count,
        "escalated": r.escalated,
        "first_message": r.first_message,
        "created_at": r.created_at.isoformat(),
        "updated_at": r.updated_at.isoformat(),
    }


def _labelled(d: Dossier) -> dict[str, Any]:
    """The turns with staff's intent label of each, and the conversation's outcome labels."""
    return {
        "turns": [
            {
                "seq": t.seq,
                "message_id": t.message_id,
                "record": t.record,
                "replies": t.replies,
                "intent_label": d.labels.get(t.id or -1),
            }
            for t in d.turns
        ],
        "outcomes": [
            {
                "kind": o.kind,
                "source": o.source,
                "staff": o.staff,
                "external_id": o.external_id,
                "created_at": o.created_at.isoformat(),
            }
            for o in d.outcomes
        ],
    }


def dossier_json(d: Dossier) -> dict[str, Any]:
    """The conversation's row (never its token hash), messages, turns with their records,
    escalations, and flow runs with their checkpoints."""
    c = d.conversation
    return {
        "format": FORMAT,
        "conversation": {
            "id": c.id,
            "channel": c.channel,
            "status": c.status,
            "paused": c.paused,
            "language": c.language,
            "turn_count": c.turn_count,
            "verified_user_id": c.verified_user_id,
            "state": c.state,
            "created_at": c.created_at.isoformat(),
            "updated_at": c.updated_at.isoformat(),
        },
        "messages": [
            {
                "id": m.id,
                "role": m.role,
                "author": m.author,
                "text": m.text,
                "status": m.status,
                "created_at": m.created_at.isoformat(),
            }
            for m in d.messages
        ],
        **_labelled(d),
        "escalations": [
            {
                "id": e.id,
                "kind": e.kind,
                "reason": e.reason,
                "helpdesk": e.helpdesk,
                "status": e.status,
                "staff": e.staff,
                "outcome": e.outcome,
                "question": e.question,
                "created_at": e.created_at.isoformat(),
            }
            for e in d.escalations
        ],
        "flow_runs": [
            {
                **service.run_json(r),
                "checkpoints": [service.checkpoint_json(c) for c in d.checkpoints.get(r.id, [])],
            }
            for r in d.runs
        ],
    }
