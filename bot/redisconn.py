"""The Redis connection several processes share (``REDIS_URL``): live events and channel leases.

The redis package is the ``redis`` extra, imported only when ``REDIS_URL`` is set, so a single
process without Redis needs none of it.
"""

from __future__ import annotations

from typing import Any

from bot.config import Settings
from bot.errors import ConfigError

#: Seconds to connect and to wait on one command: a Redis that hangs must not stall a turn.
TIMEOUT_S = 2.0


def redis_client(settings: Settings) -> Any | None:
    """An asyncio Redis client for ``settings.redis_url``, or None when it is unset. Connects on
    first use, not here, so a Redis that is down is met (and retried) by whoever uses it."""
    if not settings.redis_url:
        return None
    try:
        import redis.asyncio as aioredis
    except ImportError:
        raise ConfigError(
            "REDIS_URL is set but the redis package is not installed: "
            "pip install 'gatebot[redis]', or unset REDIS_URL for a single process"
        ) from None
    return aioredis.Redis.from_url(
        settings.redis_url,
        socket_timeout=TIMEOUT_S,
        socket_connect_timeout=TIMEOUT_S,
        health_check_interval=30,
    )
