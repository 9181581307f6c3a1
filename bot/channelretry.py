"""Channels that could not reach their platform at start, retried in the background.

A channel whose ``start`` raises :class:`bot.errors.ChannelUnavailable` (Discord or Slack out of
reach) does not take the app down: the others keep serving, /healthz names it as connecting with
the last error, and it is started again after 1, 2, 4, ... seconds (at most a minute apart) until
it comes up or the app stops. Any other error while retrying (a refused token) ends the retries
and is reported as failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from bot.errors import ChannelUnavailable
from bot.extend.channel import ChannelAdapter

log = logging.getLogger(__name__)


@dataclass
class ChannelState:
    status: str  # connecting | failed
    error: str
    attempts: int = 1
    retry_in: float | None = None


class ChannelRetries:
    def __init__(self, first_delay: float = 1.0, max_delay: float = 60.0) -> None:
        self.first_delay, self.max_delay = first_delay, max_delay
        self.states: dict[str, ChannelState] = {}
        self._waiting: dict[str, tuple[ChannelAdapter, asyncio.Task[None]]] = {}

    def retry(
        self, adapter: ChannelAdapter, error: ChannelUnavailable, on_up: Callable[[Any], None]
    ) -> None:
        """``adapter`` failed to start with ``error``: try again in the background, and hand it
        to ``on_up`` once it is up."""
        log.warning(
            "channel %s is not connected (%s); retrying in the background", adapter.name, error
        )
        self.states[adapter.name] = ChannelState("connecting", str(error), 1, self.first_delay)
        task = asyncio.create_task(self._keep_trying(adapter, on_up), name=f"retry-{adapter.name}")
        self._waiting[adapter.name] = (adapter, task)

    async def _keep_trying(self, adapter: ChannelAdapter, on_up: Callable[[Any], None]) -> None:
        state = self.states[adapter.name]
        delay = self.first_delay
        while True:
            await asyncio.sleep(delay)
            try:
                await adapter.start()
            except ChannelUnavailable as exc:
                delay = min(delay * 2, self.max_delay)
                state.attempts, state.error, state.retry_in = state.attempts + 1, str(exc), delay
                log.info("channel %s still unreachable (%s)", adapter.name, exc)
                continue
            except Exception as exc:
                state.status, state.error, state.retry_in = "failed", str(exc), None
                log.error("channel %s cannot start: %s", adapter.name, exc)
                self._waiting.pop(adapter.name, None)
                return
            log.warning("channel %s connected after %d attempt(s)", adapter.name, state.attempts)
            self.states.pop(adapter.name, None)
            self._waiting.pop(adapter.name, None)
            on_up(adapter)
            return

    def report(self) -> dict[str, dict[str, Any]]:
        return {name: asdict(state) for name, state in self.states.items()}

    async def stop(self) -> None:
        """Cancel the retries; an adapter cancelled mid-start is stopped so it leaves nothing."""
        waiting, self._waiting = self._waiting, {}
        for adapter, task in waiting.values():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            try:
                await adapter.stop()
            except Exception:
                log.exception("channel %s did not stop cleanly", adapter.name)
        self.states.clear()
