"""Settings, read once from the environment. Credentials stay here and are referenced by name."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from bot.errors import ConfigError


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, got {raw!r}") from None


def search_steps_from_env() -> int:
    """GATEBOT_SEARCH_STEPS: tool rounds a model may take per answer (default 4, 0 to 16)."""
    steps = _int("GATEBOT_SEARCH_STEPS", 4)
    if not 0 <= steps <= 16:
        raise ConfigError(f"GATEBOT_SEARCH_STEPS must be between 0 and 16, got {steps}")
    return steps


def _list(raw: str | None) -> list[str]:
    return [part.strip() for part in (raw or "").split(",") if part.strip()]


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _retention_days() -> int | None:
    if not os.environ.get("GATEBOT_RETENTION_DAYS", "").strip():
        return None
    days = _int("GATEBOT_RETENTION_DAYS", 0)
    if days < 1:
        raise ConfigError(f"GATEBOT_RETENTION_DAYS must be at least 1, got {days}")
    return days


@dataclass
class Settings:
    pack: Path = Path("knowledge/acme")
    data_dir: Path = Path("var")
    database_url: str = ""
    model: str = "offline"
    host: str = "127.0.0.1"
    port: int = 8080
    recorders: list[str] = field(default_factory=lambda: ["jsonl"])
    channels: list[str] | None = None  # None: every registered channel that is configured
    redis_url: str | None = None
    admin_token: str | None = None
    preflight: str = "off"
    email: str | None = None
    #: Turns in flight per process before the web API sheds (0: no limit); see bot/admission.py.
    #: At the 25 to 35 turns/s one process serves on two cores, 32 in flight is about a second's
    #: wait: enough to ride out a burst, short enough for a client to retry after.
    max_turns: int = 32
    #: Seconds a database call may take before the request is answered 503.
    database_timeout: float = 4.0
    #: Per client IP a minute (0: no limit): conversations created, messages sent (across
    #: conversations). The widget creates one conversation per visitor and a person types a few
    #: messages a minute, so these meet only scripts.
    rate_conversations: int = 30
    rate_messages: int = 120
    #: Staff API requests a minute per admin token; wrong tokens: per client IP.
    rate_staff: int = 600
    rate_staff_failures: int = 20
    #: Peers whose X-Forwarded-For names the client (a reverse proxy); empty: the socket's peer.
    trusted_proxies: list[str] = field(default_factory=list)
    #: Origins whose pages may use the widget's API, besides the bot's own.
    allowed_origins: list[str] = field(default_factory=list)
    #: Bearer token for /metrics; unset, /metrics answers loopback clients only.
    metrics_token: str | None = None
    #: Days a conversation is kept after its last activity (None: kept until erased by hand).
    retention_days: int | None = None
    #: The HMAC key the host site signs its user ids with (bot.identity); a credential.
    identity_secret: str | None = field(default=None, repr=False)
    #: Before a change on something a conversation owns only by a typed email (an anonymous
    #: visitor's order), send a one-time code to that email and make the change only after it.
    email_codes: bool = False
    #: Bind the web port with SO_REUSEPORT: set by ``gatebot run --workers N``, never from env.
    reuse_port: bool = False

    def __post_init__(self) -> None:
        if not self.database_url:
            self.database_url = f"sqlite:///{self.data_dir / 'gatebot.db'}"

    @property
    def jsonl_path(self) -> Path:
        return Path(os.environ.get("GATEBOT_RECORD_JSONL", self.data_dir / "turns.jsonl"))

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        data_dir = Path(env.get("GATEBOT_DATA_DIR") or "var")
        channels = env.get("GATEBOT_CHANNELS")
        preflight = (
            "routing"
            if _flag("PREFLIGHT_ROUTING")
            else "shadow"
            if _flag("PREFLIGHT_SHADOW")
            else "off"
        )
        return cls(
            pack=Path(env.get("GATEBOT_PACK") or "knowledge/acme"),
            data_dir=data_dir,
            database_url=env.get("DATABASE_URL", ""),
            model=env.get("GATEBOT_MODEL") or "offline",
            host=env.get("GATEBOT_HOST") or "127.0.0.1",
            port=_int("GATEBOT_PORT", 8080),
            recorders=[
                r.strip() for r in env.get("GATEBOT_RECORDERS", "jsonl").split(",") if r.strip()
            ],
            channels=[c.strip() for c in channels.split(",") if c.strip()] if channels else None,
            redis_url=env.get("REDIS_URL") or None,
            admin_token=env.get("GATEBOT_ADMIN_TOKEN") or None,
            preflight=preflight,
            email=env.get("GATEBOT_EMAIL") or None,
            max_turns=_int("GATEBOT_MAX_TURNS", 32),
            database_timeout=float(_int("GATEBOT_DATABASE_TIMEOUT", 4)),
            rate_conversations=_int("GATEBOT_RATE_CONVERSATIONS", 30),
            rate_messages=_int("GATEBOT_RATE_MESSAGES", 120),
            rate_staff=_int("GATEBOT_RATE_STAFF", 600),
            rate_staff_failures=_int("GATEBOT_RATE_STAFF_FAILURES", 20),
            trusted_proxies=_list(env.get("GATEBOT_TRUSTED_PROXIES")),
            allowed_origins=[o.rstrip("/") for o in _list(env.get("GATEBOT_ALLOWED_ORIGINS"))],
            metrics_token=env.get("GATEBOT_METRICS_TOKEN") or None,
            retention_days=_retention_days(),
            identity_secret=env.get("GATEBOT_IDENTITY_SECRET") or None,
            email_codes=_flag("GATEBOT_EMAIL_CODES"),
        )
