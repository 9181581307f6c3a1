"""What pre-flight can route to: the pack's flows (by their trigger intents) and FAQ entries, each
with the phrases a message is compared against.

Flows come from ``pack.flows`` when the pack loader provides them, else straight from
``flows/*.yaml`` in the pack folder (read once; only name, title, description and trigger are
needed here). A draft flow never starts, so it is never a candidate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.packs import Pack
from bot.yamlines import YamlSyntaxError, load_with_lines


@dataclass
class Candidate:
    key: str  # the flow's name or the FAQ entry's key
    phrases: list[str]  # compared with the message by embedding similarity
    keywords: list[str] = field(default_factory=list)  # compared when embeddings are off
    intents: list[str] = field(default_factory=list)  # a flow's trigger intents
    #: A flow's trigger keywords: declared ones must be in the message, or the flow cannot start.
    required: list[str] = field(default_factory=list)


def _declared_flows(pack: Pack) -> list[dict[str, Any]]:
    flows = getattr(pack, "flows", None)
    if flows is not None:
        out = []
        for f in flows.values() if isinstance(flows, dict) else flows:
            trigger = getattr(f, "trigger", None)
            out.append(
                {
                    "name": f.name,
                    "title": getattr(f, "title", ""),
                    "description": getattr(f, "description", ""),
                    "status": getattr(f, "status", "active"),
                    "trigger": {
                        "intents": list(getattr(trigger, "intents", []) or []),
                        "keywords": list(getattr(trigger, "keywords", []) or []),
                    },
                }
            )
        return out
    out = []
    for path in sorted((pack.root / "flows").glob("*.yaml")):
        try:
            data, _ = load_with_lines(path.read_text(encoding="utf-8"))  # bounded, as packs are
        except (OSError, UnicodeDecodeError, YamlSyntaxError):
            continue  # the flows loader reports a broken file; pre-flight just skips it
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            out.append(data)
    return out


def flow_candidates(pack: Pack) -> list[Candidate]:
    out = []
    for flow in _declared_flows(pack):
        if flow.get("status", "active") != "active":
            continue
        trigger = flow.get("trigger") or {}
        if isinstance(trigger, str):
            trigger = {"intents": [trigger]}
        intents = [str(i) for i in trigger.get("intents", []) or []]
        required = [str(k) for k in trigger.get("keywords", []) or []]
        keywords = list(required)
        if not intents:
            continue  # a flow with no trigger intent is started by other means, not pre-flight
        phrases = [str(p) for p in (flow.get("title"), flow.get("description")) if p]
        for name in intents:
            intent = pack.intent(name)
            if intent:
                phrases += intent.examples
                keywords += intent.keywords
        name = str(flow["name"])
        out.append(Candidate(name, phrases or [name], keywords, intents, required))
    return out


def faq_candidates(pack: Pack) -> list[Candidate]:
    return [Candidate(f.key, [f.question, *f.asked], list(f.keywords)) for f in pack.faq]
