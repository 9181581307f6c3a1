"""Embedding many turns' messages in one encoder call.

Concurrent turns each need their message embedded; the encoder costs far less per sentence in a
batch than alone. The first caller starts a worker: it yields once so the others can queue,
embeds everything queued in one call off the event loop, hands each caller its row, and repeats
while more arrived meanwhile, then ends. No task outlives the calls that needed it.

One turn asks for the same message's embedding more than once (scope, pre-flight, the intent and
sentiment heads, the move head after values, knowledge search), and concurrent turns interleave:

- rows are kept by text (:class:`bot.heads.encoder.RowCache`; the turns' batcher keeps them in the
  process-wide ``shipped_rows``, the same cache the scope check fills with the pack's texts), so a
  repeat is served from memory, never embedded again;
- a text already waiting or being embedded is not queued twice: every caller awaits the one
  future (in-flight duplicates coalesced).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import numpy as np

from bot.heads.encoder import RowCache

MAX_BATCH = 64
#: Rows kept by text when no cache is given (384 floats each for the shipped encoder).
RECENT = 256


class EmbeddingBatcher:
    def __init__(
        self,
        embed: Callable[[list[str]], np.ndarray],
        max_batch: int = MAX_BATCH,
        recent: int = RECENT,
        rows: RowCache | None = None,
    ) -> None:
        self._embed = embed
        self._max = max_batch
        self._rows = rows if rows is not None else RowCache(recent)
        self._pending: list[str] = []
        self._waiting: dict[str, asyncio.Future[np.ndarray]] = {}  # queued or being embedded
        self._worker: asyncio.Future[None] | None = None
        self.calls = 0  # encoder calls made, for tests and benchmarks

    async def embed(self, text: str) -> np.ndarray:
        row = self._rows.get(text)
        if row is not None:
            return row
        future = self._waiting.get(text)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._waiting[text] = future
            self._pending.append(text)
        if self._worker is None or self._worker.done():
            # A worker of its own, not the first caller's coroutine: a caller that flushed for
            # everyone would wait as long as others kept arriving.
            self._worker = asyncio.ensure_future(self._flush())
        # Shielded: one caller cancelled (its turn timed out) must not cancel the others' row.
        return await asyncio.shield(future)

    async def _flush(self) -> None:
        try:
            while self._pending:
                await asyncio.sleep(0)  # let turns that are ready join this batch
                batch, self._pending = self._pending[: self._max], self._pending[self._max :]
                self.calls += 1
                try:
                    rows = list(await asyncio.to_thread(self._embed, batch))
                except Exception as exc:
                    self._settle(batch, exc)
                    continue
                self._rows.put_many(batch, rows)
                self._settle(batch, rows)
        finally:
            # Cancelled mid-flush (shutdown): nobody will embed what is left; say so.
            self._settle(list(self._waiting), RuntimeError("embedding cancelled"))
            self._pending = []

    def _settle(self, texts: list[str], outcome: list[np.ndarray] | Exception) -> None:
        """Hand each text's waiters its row (or the exception) and stop tracking it."""
        for i, text in enumerate(texts):
            future = self._waiting.pop(text, None)
            if future is None or future.done():
                continue
            if isinstance(outcome, Exception):
                future.set_exception(outcome)
                future.exception()  # retrieved: a caller that went away leaves no warning
            else:
                future.set_result(outcome[i])

    def forget(self) -> None:
        """Drop the kept rows (a benchmark that repeats its messages times each as new)."""
        self._rows.clear()
