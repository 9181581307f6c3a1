"""Signed identity: the host site signs its user id (HMAC-SHA256 with GATEBOT_IDENTITY_SECRET),
the web API verifies it before creating a conversation, and the verified id reaches the turn
record (never the secret or the hash); Slack and Discord user ids count as verified."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from aiohttp.test_utils import TestClient

from bot.app import App
from bot.config import Settings
from bot.extend.recorder import MemoryRecorder
from bot.identity import sign, verify
from bot.store.customer import CONVERSATIONS

SECRET = "site-signing-secret-123"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.identity_secret = SECRET
    return settings


def test_sign_and_verify() -> None:
    # The README's server-side snippet computes exactly this.
    assert (
        sign("k", "alice") == "ec631a55bb81f5b9dc96aa930a45628d452abe41f899db1085bc350c0c9cf9a1"
    )  # openssl dgst -sha256 -hmac k
    good = sign(SECRET, "alice")
    assert verify(SECRET, "alice", good) and verify(SECRET, "alice", good.upper())
    assert not verify(SECRET, "bob", good)
    assert not verify("other", "alice", good)
    assert not verify(None, "alice", good) and not verify(SECRET, "", sign(SECRET, ""))


def _count(app: App) -> int:
    with app.store.engine.connect() as conn:
        return int(conn.scalar(sa.select(sa.func.count()).select_from(CONVERSATIONS)) or 0)


async def test_a_signed_user_id_is_verified_and_recorded(
    client: TestClient, app: App, memory: MemoryRecorder
) -> None:
    resp = await client.post(
        "/api/conversations", json={"user_id": "alice", "user_hash": sign(SECRET, "alice")}
    )
    assert resp.status == 201
    body = await resp.json()
    conv = app.store.get_conversation(body["id"])
    assert conv is not None and conv.verified_user_id == "web:alice"
    headers = {"Authorization": f"Bearer {body['token']}"}
    sent = await client.post(
        f"/api/conversations/{body['id']}/messages",
        json={"text": "hello", "client_message_id": "m1"},
        headers=headers,
    )
    assert sent.status == 200
    record = (await sent.json())["turn"]
    assert record["message"]["user"] == {"id": "web:alice", "verified": True}
    kept = json.dumps(memory.turns, default=str)
    assert SECRET not in kept and sign(SECRET, "alice") not in kept


@pytest.mark.parametrize(
    "claim",
    [
        {"user_id": "alice", "user_hash": sign(SECRET, "bob")},
        {"user_id": "alice", "user_hash": sign("guessed", "alice")},
        {"user_id": "alice"},
        {"user_hash": sign(SECRET, "alice")},
        {"user_id": 7, "user_hash": sign(SECRET, "7")},
        {"user_id": "alice", "user_hash": ""},
    ],
)
async def test_a_bad_claim_is_401_and_creates_nothing(
    client: TestClient, app: App, claim: dict[str, object]
) -> None:
    before = _count(app)
    resp = await client.post("/api/conversations", json=claim)
    assert resp.status == 401
    assert SECRET not in await resp.text()
    assert _count(app) == before


async def test_no_secret_configured_verifies_nobody(client: TestClient, app: App) -> None:
    app.settings.identity_secret = None
    resp = await client.post(
        "/api/conversations", json={"user_id": "alice", "user_hash": sign(SECRET, "alice")}
    )
    assert resp.status == 401


async def test_anonymous_visitors_are_recorded_unverified(client: TestClient, app: App) -> None:
    body = await (await client.post("/api/conversations", json={})).json()
    sent = await client.post(
        f"/api/conversations/{body['id']}/messages",
        json={"text": "hello", "client_message_id": "m1"},
        headers={"Authorization": f"Bearer {body['token']}"},
    )
    assert (await sent.json())["turn"]["message"]["user"] == {"id": None, "verified": False}


def test_platform_user_ids_count_as_verified(app: App) -> None:
    conv = app.host.conversation_for("slack", "C1:17.1", "U123")
    assert conv.verified_user_id == "slack:U123"
    # The thread's identity is its opener's: a later author does not replace it.
    assert app.host.conversation_for("slack", "C1:17.1", "U999").verified_user_id == "slack:U123"
    assert app.host.conversation_for("discord", "42", None).verified_user_id is None
