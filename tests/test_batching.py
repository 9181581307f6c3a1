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


async def test_a_text_already_waiting_is_embedded_once_for_every_caller() -> None:
    seen: list[list[str]] = []

    def embed(texts: list[str]) -> np.ndarray:
        seen.append(texts)
        return np.array([[float(len(t))] for t in texts])

    batcher = EmbeddingBatcher(embed)
    rows = await asyncio.gather(*(batcher.embed(t) for t in ["same", "other", "same", "same"]))
    assert seen == [["same", "other"]] and batcher.calls == 1
    assert rows[0] is rows[2] is rows[3]


async def test_a_caller_that_goes_away_does_not_cancel_the_others_row() -> None:
    def embed(texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 2))

    batcher = EmbeddingBatcher(embed)
    gone = asyncio.ensure_future(batcher.embed("hi"))
    stays = asyncio.ensure_future(batcher.embed("hi"))
    await asyncio.sleep(0)
    gone.cancel()
    assert (await stays).shape == (2,)


async def test_batchers_given_one_row_cache_share_their_rows() -> None:
    from bot.heads.encoder import RowCache

    calls: list[list[str]] = []

    def embed(texts: list[str]) -> np.ndarray:
        calls.append(texts)
        return np.zeros((len(texts), 3))

    rows = RowCache(8)
    await EmbeddingBatcher(embed, rows=rows).embed("hello")
    await EmbeddingBatcher(embed, rows=rows).embed("hello")
    assert calls == [["hello"]] and rows.get("hello") is not None
