"""Concurrent turns share encoder calls."""

from __future__ import annotations

import asyncio

import numpy as np

from bot.heads.batching import EmbeddingBatcher


async def test_concurrent_callers_share_one_encoder_call() -> None:
    seen: list[list[str]] = []

    def embed(texts: list[str]) -> np.ndarray:
        seen.append(texts)
        return np.array([[float(len(t))] for t in texts])

    batcher = EmbeddingBatcher(embed)
    rows = await asyncio.gather(*(batcher.embed("x" * n) for n in range(1, 11)))
    assert [float(r[0]) for r in rows] == [float(n) for n in range(1, 11)]
    assert batcher.calls == 1 and len(seen[0]) == 10


async def test_an_encoder_failure_reaches_every_caller_and_the_next_batch_runs() -> None:
    calls = 0

    def embed(texts: list[str]) -> np.ndarray:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("encoder broke")
        return np.zeros((len(texts), 1))

    batcher = EmbeddingBatcher(embed)
    results = await asyncio.gather(batcher.embed("a"), batcher.embed("b"), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    assert (await batcher.embed("c")).shape == (1,)


async def test_a_text_asked_for_again_is_served_from_the_recent_rows() -> None:
    seen: list[list[str]] = []

    def embed(texts: list[str]) -> np.ndarray:
        seen.append(texts)
        return np.array([[float(len(t))] for t in texts])

    batcher = EmbeddingBatcher(embed, recent=2)
    first = await batcher.embed("hello")
    again = await batcher.embed("hello")  # pre-flight, then the heads: one encoder call
    assert again is first and batcher.calls == 1 and not first.flags.writeable
    await batcher.embed("a")
    await batcher.embed("bb")  # "hello" is now the oldest of three and is let go
    await batcher.embed("hello")
    assert batcher.calls == 4 and seen[-1] == ["hello"]
