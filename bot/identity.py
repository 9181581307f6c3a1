"""Signed identity from the host site, as help-desk widgets do it: the site's server computes
``user_hash = hex(HMAC-SHA256(GATEBOT_IDENTITY_SECRET, user_id))`` and gives the widget both; the
bot recomputes it. Only the site's server and the bot hold the secret, so a visitor cannot claim
another user's id. The secret never leaves this module's callers' settings: not in a record, a
log or a prompt."""

from __future__ import annotations

import hashlib
import hmac

#: Longer ids are refused: the column holds 255 characters with a channel prefix.
MAX_USER_ID = 200


def sign(secret: str, user_id: str) -> str:
    """The ``user_hash`` a host site sends for ``user_id`` (what its server computes)."""
    return hmac.new(secret.encode(), user_id.encode(), hashlib.sha256).hexdigest()


def verify(secret: str | None, user_id: str, user_hash: str) -> bool:
    """Whether ``user_hash`` signs ``user_id`` with ``secret``, compared in constant time.
    No secret configured: nothing verifies."""
    if not secret or not user_id or len(user_id) > MAX_USER_ID:
        return False
    return hmac.compare_digest(sign(secret, user_id), user_hash.strip().lower())
