"""The knowledge tools a model searches with: ``knowledge.search`` and ``knowledge.read``.

They are built per turn over the app's retriever, with a :class:`FactLedger` that keeps every fact
they returned. The reply gate checks a draft's citations against exactly that ledger, so a reply
can cite only what this turn's searches and reads actually produced, whatever the model claims.
"""

from __future__ import annotations

from typing import Any

from bot.extend.retriever import Fact, Retriever, search_with
from bot.extend.tool import WINDOW_CHARS, Tool, ToolError, ToolRegistry, window
from bot.turn.queryvec import MessageVectors

SEARCH = "knowledge.search"
READ = "knowledge.read"
#: Bounds on what one call may ask for, so a model cannot flood its own context.
MAX_K = 8
MAX_READ = 4000


class FactLedger:
    """The facts retrieved this turn, by key, in the order they were first found."""

    def __init__(self) -> None:
        self.facts: dict[str, Fact] = {}

    def add(self, facts: list[Fact]) -> None:
        for fact in facts:
            self.facts.setdefault(fact.key, fact)

    @property
    def keys(self) -> set[str]:
        return set(self.facts)

    def __len__(self) -> int:
        return len(self.facts)

    def ordered(self) -> list[Fact]:
        return list(self.facts.values())


class SearchKnowledge(Tool):
    name = SEARCH
    recorded = False  # the pack's own passages: replay searches the new pack again
    description = (
        "Search the help center. Returns passages, best first, each with the key to cite as [key]."
    )
    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 500},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 3},
        },
        "required": ["query"],
        "additionalProperties": False,
    }

    def __init__(
        self, retriever: Retriever, ledger: FactLedger, vectors: MessageVectors | None = None
    ) -> None:
        self.retriever, self.ledger, self.vectors = retriever, ledger, vectors

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        query = arguments["query"]
        vector = None
        if self.vectors is not None and self.retriever.takes_vector:
            vector = await self.vectors.get(query)  # the turn's message: already embedded
        facts = await search_with(self.retriever, query, int(arguments.get("k", 3)), vector)
        self.ledger.add(facts)
        return {
            "results": [
                {"key": f.key, "title": f.title, "text": f.text, "score": f.score} for f in facts
            ],
            "note": f"{len(facts)} passage(s) found",
        }


class ReadSource(Tool):
    recorded = False  # the pack's own sources: replay reads the new pack again
    name = READ
    description = (
        "Read a window of a passage or a whole document by key (e.g. 'doc-monitor#alerts' or "
        "'doc-monitor'). Returns text, offset, length, total and next_offset (null at the end)."
    )
    schema = {
        "type": "object",
        "properties": {
            "key": {"type": "string", "minLength": 1, "maxLength": 200},
            "offset": {"type": "integer", "minimum": 0, "default": 0},
            "length": {"type": "integer", "minimum": 1, "maximum": MAX_READ, "default": 2000},
        },
        "required": ["key"],
        "additionalProperties": False,
    }

    def __init__(self, retriever: Retriever, ledger: FactLedger) -> None:
        self.retriever, self.ledger = retriever, ledger

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        key = arguments["key"]
        offset = int(arguments.get("offset", 0))
        length = int(arguments.get("length", WINDOW_CHARS))
        try:
            result = await read_window(self.retriever, key, offset, length)
        except (LookupError, ValueError) as exc:
            # A wrong key or offset is the model's mistake: it reads the reason and can retry.
            raise ToolError(str(exc).strip("'\"")) from exc
        known = self.ledger.facts.get(key)
        source = known.source if known else str(result.get("source") or key.split("#")[0])
        self.ledger.add([Fact(key, result["text"], source, "read", title=result.get("title", ""))])
        shown = f"{result['offset']}-{result['offset'] + result['length']}"
        return {**result, "note": f"read characters {shown} of {result['total']}"}


async def read_window(retriever: Retriever, key: str, offset: int, length: int) -> dict[str, Any]:
    """The retriever's own windowed reader when it has one (the knowledge plugin's reads whole
    documents too); else a window over the passages it searches (the core BM25 retriever's)."""
    reader = getattr(retriever, "read", None)
    if reader is not None:
        result: dict[str, Any] = await reader(key, offset, length)
        return result
    passages: list[Fact] = getattr(retriever, "facts", [])
    fact = next((f for f in passages if f.key == key), None)
    if fact is None:
        raise LookupError(f"no passage {key!r}")
    if offset > len(fact.text):
        raise ValueError(
            f"offset {offset} is past the end of {key!r} ({len(fact.text)} characters)"
        )
    part = window(fact.text, offset, length)
    end = part["offset"] + part["length"]
    return {
        "key": key,
        "title": fact.title,
        "text": part["content"],
        "offset": part["offset"],
        "length": part["length"],
        "total": part["total"],
        "next_offset": end if end < part["total"] else None,
        "source": fact.source,
    }


def knowledge_tools(
    retriever: Retriever, vectors: MessageVectors | None = None
) -> tuple[ToolRegistry, FactLedger]:
    """This turn's two knowledge tools over ``retriever`` and the ledger they fill; ``vectors``
    gives the search a query's embedding already made this turn."""
    ledger = FactLedger()
    registry = ToolRegistry()
    registry.add(SearchKnowledge(retriever, ledger, vectors))
    registry.add(ReadSource(retriever, ledger))
    return registry, ledger
