"""Redis for tests: the URL when a server answers (``GATEBOT_TEST_REDIS``, default the local
one), else a skip that says why (a failure under CI, which has one); and a fresh PostgreSQL
schema for tests that start processes of their own."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

REDIS_URL = os.environ.get("GATEBOT_TEST_REDIS", "redis://127.0.0.1:6379/0")


def redis_reason() -> str | None:
    try:
        import redis
    except ImportError:
        return "the redis package is not installed (pip install -e '.[redis]')"
    try:
        redis.Redis.from_url(REDIS_URL, socket_timeout=2, socket_connect_timeout=2).ping()
    except Exception as exc:
        return f"Redis not reachable at {REDIS_URL}: {exc}"
    return None


@pytest.fixture(scope="session")
def redis_url() -> str:
    reason = redis_reason()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the Redis tests: {reason}")
        pytest.skip(reason)
    return REDIS_URL


@contextmanager
def fresh_schema(postgres_url: str) -> Iterator[str]:
    """A PostgreSQL URL whose search path is a new schema, dropped afterwards."""
    import psycopg

    plain = postgres_url.replace("+psycopg", "")
    schema = "gatebot_test_" + secrets.token_hex(4)
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{postgres_url}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
