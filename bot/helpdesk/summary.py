"""What staff read first about an escalation, on the desk's thread and in the email."""

from __future__ import annotations

from bot.store import Conversation, Escalation, Message

#: Messages of the transcript a help desk sees with the escalation.
TRANSCRIPT_LINES = 10


def summary(conv: Conversation, escalation: Escalation, messages: list[Message]) -> str:
    """Why, where, what is known, and the last lines."""
    values = conv.state.get("values", {})
    known = ", ".join(f"{k}: {v['value']}" for k, v in values.items()) or "nothing yet"
    lines = [
        f"Escalation #{escalation.id} ({escalation.kind}): {escalation.reason}",
        f"Customer on {conv.channel}, conversation {conv.id}",
        f"Known: {known}",
        "Last messages:",
    ]
    for m in messages[-TRANSCRIPT_LINES:]:
        who = m.author or m.role
        lines.append(f"  {who}: {m.text}")
    return "\n".join(lines)
