"""The asyncio Redis client for ``REDIS_URL`` (the ``redis`` extra), or None when it is unset."""

from __future__ import annotations

from typing import Any

from bot.config import Settings
from bot.errors import ConfigError


def redis_client(settings: Settings) -> Any:
    if not settings.redis_url:
        return None
    try:
        import redis.asyncio as redis
    except ImportError as exc:
        raise ConfigError(
            "REDIS_URL is set but redis is not installed: pip install 'gatebot[redis]'"
        ) from exc
    return redis.Redis.from_url(settings.redis_url, socket_timeout=5, socket_connect_timeout=3)
