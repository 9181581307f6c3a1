"""The tripwire for store calls on the event loop (bot/store/guard.py) catches server code, and
only server code: calls on a database thread, and a test's own synchronous setup, pass."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.store import Store
from bot.store.guard import StoreOnLoop, install
from bot.store.runner import StoreRunner

# A coroutine as the server would have it: compiled under a file name outside tests/.
SERVER_CODE = """
async def look_up(store, cid):
    return store.get_conversation(cid)
"""


def server_coroutine() -> Any:
    scope: dict[str, Any] = {}
    exec(compile(SERVER_CODE, str(Path("bot") / "server_code.py"), "exec"), scope)
    return scope["look_up"]


def server_coroutine_sync() -> Any:
    scope: dict[str, Any] = {}
    code = "def look_up(store, cid):\n    return store.get_conversation(cid)\n"
    exec(compile(code, str(Path("bot") / "server_code.py"), "exec"), scope)
    return scope["look_up"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(f"sqlite:///{tmp_path / 'guard.db'}")
    store.migrate()
    yield store
    store.close()


@pytest.fixture
def caught() -> Iterator[list[str]]:
    found: list[str] = []
    uninstall = install(found.append)
    yield found
    uninstall()


async def test_a_call_on_the_loop_from_server_code_is_reported(
    store: Store, caught: list[str]
) -> None:
    await server_coroutine()(store, "nope")
    assert len(caught) == 1
    assert "Store.get_conversation" in caught[0] and "server_code.py" in caught[0]


async def test_calls_on_a_database_thread_and_in_test_code_pass(
    store: Store, caught: list[str]
) -> None:
    runner = StoreRunner(store)
    try:
        conv, _ = await runner.call(store.create_conversation, "web")
        assert await runner.call(server_coroutine_sync(), store, conv.id) is not None
    finally:
        runner.close()
    assert store.get_conversation(conv.id) is not None  # the test's own check
    assert caught == []


def test_without_a_report_function_the_call_raises(store: Store) -> None:
    uninstall = install()
    try:
        with pytest.raises(StoreOnLoop, match="get_conversation"):
            asyncio.run(server_coroutine()(store, "nope"))
    finally:
        uninstall()
    asyncio.run(server_coroutine()(store, "nope"))  # uninstalled: nothing checks any more
