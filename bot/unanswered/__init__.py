"""What the agent could not answer, grouped into suggested pack changes (``gatebot unanswered``).

:func:`unanswered_clusters` is what a page or a command calls: the store's unanswered questions
and out-of-scope requests (:mod:`bot.unanswered.gather`), grouped by embedding with a suggested
FAQ entry or document gap each (:mod:`bot.unanswered.cluster`).
"""

from __future__ import annotations

from bot.unanswered.cluster import (
    NEAR,
    THRESHOLD,
    Cluster,
    Passage,
    cluster_asked,
    suggested_question,
    unanswered_clusters,
)
from bot.unanswered.gather import Asked, gather

__all__ = [
    "NEAR",
    "THRESHOLD",
    "Asked",
    "Cluster",
    "Passage",
    "cluster_asked",
    "gather",
    "suggested_question",
    "unanswered_clusters",
]
