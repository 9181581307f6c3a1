"""Outcomes as labels: what became of a conversation, and staff's reading of a turn.

An outcome (trial, demo, purchase, churn, resolved, not-resolved) arrives from a CRM or billing
webhook (``POST /api/outcomes``) or from staff resolving an escalation. Each is stored with links
to the conversation's turns and the head versions that read them, so a later report can say which
versions' readings led where. A turn label is staff confirming or correcting one turn's intent:
what ``gatebot heads report`` and ``gatebot heads promote`` score heads against.

Modules: ``labels`` (validating and storing both), ``evaluation`` (readings against labels,
bootstrap intervals), ``promotion`` (the gate a candidate head passes), ``packpins`` (rewriting a
pack's pins), ``diagram`` (the reliability diagram), ``simulate`` (synthetic labelled traffic).
"""

from __future__ import annotations

#: What can become of a conversation.
KINDS = ("trial", "demo", "purchase", "churn", "resolved", "not-resolved")
#: The outcomes the conversion forecast predicts.
CONVERTED = frozenset({"purchase", "trial"})


class OutcomeError(ValueError):
    """Bad input for an outcome or a label; the message says which field and why."""


class NotFound(LookupError):
    """The conversation or turn an outcome or label names does not exist."""


__all__ = ["CONVERTED", "KINDS", "NotFound", "OutcomeError"]
