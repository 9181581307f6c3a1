"""A part that will not stop does not keep the app from stopping: each channel adapter's stop
and the live events' stop get a bounded time, then the app goes on without them (and says so).
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.app import _bounded


async def test_a_stop_that_swallows_its_cancellation_is_left_behind(
    caplog: pytest.LogCaptureFixture,
) -> None:
    state = {"cancels": 0, "ended": False}

    async def stubborn() -> None:
        # Like a read loop whose cancel came back as a timeout: it reads on (a bounded while).
        for _ in range(100):
            try:
                await asyncio.sleep(0.02)
            except asyncio.CancelledError:
                state["cancels"] += 1
        state["ended"] = True

    with caplog.at_level(logging.WARNING, logger="bot.app"):
        await _bounded("channel stubborn", stubborn(), seconds=0.1)
    assert not state["ended"]  # the app went on while the part was still running
    assert "channel stubborn did not stop within 0.1 s" in caplog.text
    for _ in range(400):  # bounded: let it end by itself, so no task outlives the test
        if state["ended"]:
            break
        await asyncio.sleep(0.01)
    assert state["ended"] and state["cancels"] >= 1


async def test_a_stop_that_ends_or_fails_is_awaited_as_it_is() -> None:
    done: list[str] = []

    async def quick() -> None:
        done.append("stopped")

    async def broken() -> None:
        raise RuntimeError("adapter broke while stopping")

    await _bounded("channel quick", quick(), seconds=5)
    assert done == ["stopped"]
    with pytest.raises(RuntimeError, match="broke while stopping"):
        await _bounded("channel broken", broken(), seconds=5)
