"""The turn's message as a query vector for knowledge search, from the embedding the heads made.

Scope, pre-flight and the heads embed the message through the readers' batcher; knowledge search
needs the same vector (the retriever truncates at the model's 256 word pieces, the heads at 64, so
the two agree exactly whenever the message fits in 64). :class:`MessageVectors` hands the batcher's
row to the retriever as a :class:`bot.extend.retriever.QueryVector`: a hit in the row cache for
the turn's own message, a batched and coalesced embedding for any other query (a model's search).
A longer text, the torch backend (whose model the retriever holds apart) or no heads: None, and
the retriever embeds the text itself.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.extend.retriever import QueryVector

log = logging.getLogger(__name__)


class MessageVectors:
    def __init__(self, batcher: Any) -> None:
        self.batcher = batcher  # ``await batcher.embed(text)``: the shipped encoder's row

    async def get(self, text: str) -> QueryVector | None:
        if self.batcher is None:
            return None
        from bot.heads.encoder import IN_PROCESS, MAX_SEQ_LENGTH, backend, load_encoder

        if backend() not in IN_PROCESS:
            return None
        encoder = load_encoder()
        if len(encoder.token_ids([text], encoder.folder_max_length)[0]) > MAX_SEQ_LENGTH:
            return None  # cut at 64 it differs from the 256-token vector passages are matched at
        try:
            values = await self.batcher.embed(text)
        except Exception:  # the encoder failed: the retriever embeds (or falls back) itself
            log.warning("query vector not made; the retriever embeds the text", exc_info=True)
            return None
        return QueryVector(text, str(encoder.folder), values)
