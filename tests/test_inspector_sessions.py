"""Inspector sessions in the shared database: they expire, stay bounded, keep only a hash of the
cookie, and hold across two apps on one PostgreSQL schema (log in on one, work on the other;
log out on one, gone on both)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from aiohttp.test_utils import TestClient, TestServer

from bot.app import App
from bot.config import Settings
from bot.store import Store, staffsessions
from bot.store.staffsessions import (
    close_staff_session,
    count_staff_sessions,
    find_staff_session,
    open_staff_session,
)
from tests.conftest import ACME
from tests.redis_fixture import fresh_schema

ADMIN = "inspector-admin-token"
COOKIE = "gatebot_inspector"


def test_sessions_expire_stay_bounded_and_keep_only_a_hash(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(database_url)
    store.migrate()
    try:
        cookie, row = open_staff_session(store, "Dana", 60, ADMIN)
        found = find_staff_session(store, cookie, ADMIN)
        assert found is not None and found.staff == "Dana" and found.csrf == row.csrf
        assert find_staff_session(store, "guess", ADMIN) is None
        assert find_staff_session(store, cookie, "a-new-token") is None  # the token changed
        with store.engine.connect() as db:
            stored = [tuple(r) for r in db.execute(sa.text("SELECT * FROM staff_sessions"))]
        assert cookie not in repr(stored) and ADMIN not in repr(stored)  # only hashes
        with store.engine.begin() as db:
            db.execute(
                sa.text("UPDATE staff_sessions SET expires_at = :t"),
                {"t": datetime.now(UTC) - timedelta(seconds=1)},
            )
        assert find_staff_session(store, cookie, ADMIN) is None  # expired
        monkeypatch.setattr(staffsessions, "MAX_SESSIONS", 3)
        made = [open_staff_session(store, str(n), 60, ADMIN)[0] for n in range(4)]
        assert count_staff_sessions(store) == 3  # the expired one swept, the oldest live gone
        assert find_staff_session(store, made[0], ADMIN) is None
        assert find_staff_session(store, made[3], ADMIN) is not None
        close_staff_session(store, made[3])
        assert find_staff_session(store, made[3], ADMIN) is None
    finally:
        store.close()


@pytest.fixture
async def two_apps(
    postgres: str, tmp_path: Path
) -> AsyncIterator[tuple[list[TestClient], list[App]]]:
    from gatebot_web.server import build_web_app

    with fresh_schema(postgres) as url:
        async with AsyncExitStack() as stack:
            clients, apps = [], []
            for n in range(2):
                settings = Settings(
                    pack=ACME, data_dir=tmp_path / f"p{n}", database_url=url, recorders=[]
                )
                settings.admin_token = ADMIN
                app = App(settings)
                apps.append(app)
                await app.start(channels=False)
                stack.push_async_callback(app.stop)
                server = TestServer(build_web_app(app), host="127.0.0.1")
                clients.append(await stack.enter_async_context(TestClient(server)))
            yield clients, apps


async def _log_in(client: TestClient) -> dict[str, str]:
    login = await client.post(
        "/inspector/login", data={"token": ADMIN, "staff": "Dana"}, allow_redirects=False
    )
    assert login.status == 303
    return {"Cookie": f"{COOKIE}={login.cookies[COOKIE].value}"}


async def test_a_new_admin_token_ends_every_session(
    two_apps: tuple[list[TestClient], list[App]],
) -> None:
    (one, other), apps = two_apps
    cookie = await _log_in(one)
    assert (await other.get("/inspector", headers=cookie, allow_redirects=False)).status == 200
    for app in apps:
        app.settings.admin_token = "a-new-token"
    for client in (one, other):
        resp = await client.get("/inspector", headers=cookie, allow_redirects=False)
        assert resp.status == 303


async def test_a_session_made_on_one_app_holds_on_the_other_until_logout(
    two_apps: tuple[list[TestClient], list[App]],
) -> None:
    (one, other), _ = two_apps
    cookie = await _log_in(one)
    page = await other.get("/inspector", headers=cookie, allow_redirects=False)
    assert page.status == 200 and "Dana" in await page.text()
    found = re.search(r'<meta name="csrf" content="([^"]+)"', await page.text())
    assert found
    # The CSRF token from the other app's page is good on the first app.
    resp = await one.post(
        "/inspector/api/runs/nope/rewind",
        json={"at_checkpoint": 0},
        headers={"X-CSRF-Token": found.group(1)},
    )
    assert resp.status == 404  # past the session and CSRF checks, to the missing run
    resp = await one.post(
        "/inspector/api/runs/nope/rewind", json={"at_checkpoint": 0}, headers={"X-CSRF-Token": "x"}
    )
    assert resp.status == 403
    out = await other.post(
        "/inspector/logout", data={"csrf": found.group(1)}, headers=cookie, allow_redirects=False
    )
    assert out.status == 303
    for client in (one, other):
        resp = await client.get("/inspector", headers=cookie, allow_redirects=False)
        assert resp.status == 303 and resp.headers["Location"].startswith("/inspector/login")
