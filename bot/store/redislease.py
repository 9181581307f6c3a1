"""Turn locks as Redis leases with a fencing token (see :mod:`bot.store.turnlock`).

``SET gatebot:turn:ID TOKEN NX PX TTL``: the token is a number from one counter (INCR), so a later
holder always has a larger one. While the turn runs the lease is renewed every third of its TTL,
only while the key still holds our token; it is released by token too (a holder whose lease lapsed
never deletes its successor's). A process that dies stops renewing: within ``TTL_MS`` another
process may run the turn (recovery). Before committing, a holder confirms the key still holds its
token (:meth:`RedisLease.confirm`); the commit's own check on the conversation's turn count covers
the milliseconds between the two.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from bot.errors import Unavailable
from bot.store.leases import LeaseLost, backoff

#: A lease lasts this long unless renewed; renewed every third of it while the turn runs.
TTL_MS = 15_000
PREFIX = "gatebot:turn:"
FENCE = "gatebot:turn-fence"

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class RedisLease:
    def __init__(self, owner: RedisLeases, key: str, token: int) -> None:
        self.owner, self.key, self.token = owner, key, token
        self.lost = False
        # Stopped by this event, never cancelled: a task cancelled while a command is in flight
        # can leave the shared connection with an unread reply, which the next command then reads.
        self._stop = asyncio.Event()
        self._renewer = asyncio.create_task(self._renew_forever(), name=f"lease {key}")

    async def _renew_forever(self) -> None:
        while not self.lost:
            try:
                await asyncio.wait_for(self._stop.wait(), self.owner.ttl_ms / 3000)
                return  # released
            except TimeoutError:
                pass
            try:
                renewed = await self.owner.redis.eval(
                    _RENEW, 1, self.key, str(self.token), self.owner.ttl_ms
                )
            except Exception:  # Redis unreachable: keep trying until the lease would lapse
                continue
            if not renewed:
                self.lost = True

    async def stop_renewing(self) -> None:
        """Stop renewing (the lease then lapses unless released), after any renewal in flight."""
        self._stop.set()
        await self._renewer

    async def confirm(self) -> None:
        held = await self.owner.run(self.owner.redis.get(self.key))
        if self.lost or held is None or int(held) != self.token:
            self.lost = True
            raise LeaseLost("the conversation's lease lapsed before the turn was stored", 1.0)

    async def release(self) -> None:
        await self.stop_renewing()
        with contextlib.suppress(Exception):  # unreachable: the lease lapses on its own
            await self.owner.redis.eval(_RELEASE, 1, self.key, str(self.token))


class RedisLeases:
    name = "redis lease"

    def __init__(self, redis: Any, ttl_ms: int = TTL_MS) -> None:
        self.redis, self.ttl_ms = redis, ttl_ms

    async def acquire(self, conversation_id: str, wait: float) -> RedisLease:
        key = PREFIX + conversation_id
        deadline, step = asyncio.get_running_loop().time() + wait, 0.01
        token = int(await self.run(self.redis.incr(FENCE)))
        while True:
            if await self.run(self.redis.set(key, token, nx=True, px=self.ttl_ms)):
                return RedisLease(self, key, token)
            step = await backoff(deadline, step)

    async def run(self, call: Any) -> Any:
        """A Redis command; an unreachable Redis is a 503, like an unreachable database."""
        try:
            return await asyncio.wait_for(call, 5.0)
        except (TimeoutError, OSError, ConnectionError) as exc:
            raise Unavailable(f"Redis is not answering ({type(exc).__name__})", 1.0) from exc
        except Exception as exc:
            if type(exc).__module__.startswith("redis"):
                raise Unavailable(f"Redis failed ({type(exc).__name__})", 1.0) from exc
            raise

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self.redis.aclose()
