"""Embedding many turns' messages in one encoder call.

Concurrent turns each need their message embedded; the encoder costs far less per sentence in a
batch than alone. The first caller starts a worker: it yields once so the others can queue,
embeds everything queued in one call off the event loop, hands each caller its row, and repeats
while more arrived meanwhile, then ends. No task outlives the calls that needed it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import numpy as np

MAX_BATCH = 64


class EmbeddingBatcher:
    def __init__(
        self, embed: Callable[[list[str]], np.ndarray], max_batch: int = MAX_BATCH
    ) -> None:
        self._embed = embed
        self._max = max_batch
        self._pending: list[tuple[str, asyncio.Future[np.ndarray]]] = []
        self._worker: asyncio.Future[None] | None = None
        self.calls = 0  # encoder calls made, for tests and benchmarks

    async def embed(self, text: str) -> np.ndarray:
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
                for (_, future), row in zip(batch, rows, strict=True):
                    if not future.done():
                        future.set_result(row)
        finally:
            # Cancelled mid-flush (shutdown): nobody will embed what is left; say so.
            for _, future in self._pending:
                if not future.done():
                    future.set_exception(RuntimeError("embedding cancelled"))
            self._pending = []
