"""gatebot_knowledge: knowledge search with embeddings and BM25, kept in the store.

What this plugin owns, by module:

- ``passages``, ``sources``: cutting a pack's FAQ and documents (Markdown, HTML, text) into
  passages with stable keys.
- ``embedder``: the embedding model (local only; the heads' numpy encoder by default) and the
  switch that turns it off.
- ``lexical``, ``index``: BM25 (bm25s) and the hybrid ranking over vectors in memory.
- ``retriever``: the :class:`bot.extend.retriever.Retriever` the agent uses; builds the index
  from the store (``bot.store.passages``), searches, and reads passages in windows.
- ``answerability``, ``specific``, ``packfit``: does the best passage answer; ``packfit`` fits the
  head to the pack when the index is built and finds the names a pack never says.
- ``evaluate``, ``cli``: ``gatebot knowledge index|search|read|eval``.

Importing the package loads no model and no numpy-heavy code: the app pays for embeddings only
when the retriever is built at start-up.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bot.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

log = logging.getLogger(__name__)


def _factory(app: Any) -> Any:
    try:
        import bm25s  # noqa: F401  (imported late by the index; missing it must show here)

        from gatebot_knowledge.retriever import KnowledgeRetriever
    except ImportError as exc:
        # numpy and bm25s come with the "embeddings" extra; without it (the slim Docker image) the
        # core's own BM25 retriever answers, as if this plugin were not installed.
        from bot.extend.retriever import LexicalRetriever

        log.warning(
            "knowledge: %s; using the core lexical retriever (install gatebot[embeddings])", exc
        )
        return LexicalRetriever(app.pack)
    return KnowledgeRetriever.for_app(app)


# tryfirst: register() order decides which retriever the app uses (the last one registered), so
# being called first lets any other plugin's retriever take precedence over this one.
@hookimpl(tryfirst=True)
def register_retrievers(register: Callable[[Any], None]) -> None:
    register(_factory)


@hookimpl
def register_commands(cli: click.Group) -> None:
    from gatebot_knowledge.cli import knowledge

    cli.add_command(knowledge)


@hookimpl
def startup(app: Any) -> Any:
    # By name, not isinstance: importing the retriever needs numpy, which may be absent.
    if type(app.retriever).__name__ == "KnowledgeRetriever":
        return app.retriever.start()
    return None
