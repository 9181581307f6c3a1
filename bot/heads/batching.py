"""Embedding many turns' messages in one encoder call.

Concurrent turns each need their message embedded; the encoder costs far less per sentence in a
batch than alone. The first caller starts a worker: it yields once so the others can queue,
embeds everything queued in one call off the event loop, hands each caller its row, and repeats
while more arrived meanwhile, then ends. No task outlives the calls that needed it.

One turn asks for the same message's embedding more than once (pre-flight, then the intent and
sentiment heads, then the move head after values), and concurrent turns interleave, so the last
few hundred rows are kept by text: a repeat is served from memory, never embedded again.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

MAX_BATCH = 64
#: Rows kept by text (384 floats each for the shipped encoder: about 0.4 MB in all).
RECENT = 256


class EmbeddingBatcher:
    def __init__(
        self,
        embed: Callable[[list[str]], np.ndarray],
        max_batch: int = MAX_BATCH,
        recent: int = RECENT,
    ) -> None:
        self._embed = embed
        self._max = max_batch
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._keep = recent
        self._pending: list[tuple[str, asyncio.Future[np.ndarray]]] = []
        self._worker: asyncio.Future[None] | None = None
        self.calls = 0  # encoder calls made, for tests and benchmarks

    async def embed(self, text: str) -> np.ndarray:
        row = self._recent.get(text)
        if row is not None:
            self._recent.move_to_end(text)
            return row
        future: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()
        self._pending.append((text, future))
        if self._worker is None or self._worker.done():
            # A worker of its own, not the first caller's coroutine: a caller that flushed for
            # everyone would wait as long as others kept arriving.
            self._worker = asyncio.ensure_future(self._flush())
        return await future

    async def _flush(self) -> None:
        try:
            while self._pending:
                await asyncio.sleep(0)  # let turns that are ready join this batch
                batch, self._pending = self._pending[: self._max], self._pending[self._max :]
                self.calls += 1
                try:
                    rows = await asyncio.to_thread(self._embed, [text for text, _ in batch])
                except Exception as exc:
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for (text, future), row in zip(batch, rows, strict=True):
                    self._remember(text, row)
                    if not future.done():
                        future.set_result(row)
        finally:
            # Cancelled mid-flush (shutdown): nobody will embed what is left; say so.
            for _, future in self._pending:
                if not future.done():
                    future.set_exception(RuntimeError("embedding cancelled"))
            self._pending = []

    def forget(self) -> None:
        """Drop the recent rows (a benchmark that repeats its messages times each as new)."""
        self._recent.clear()

    def _remember(self, text: str, row: np.ndarray) -> None:
        row.setflags(write=False)  # shared by every caller that asks for this text
        self._recent[text] = row
        self._recent.move_to_end(text)
        while len(self._recent) > self._keep:
            self._recent.popitem(last=False)
