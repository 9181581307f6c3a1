"""The one error root. Every error a user can see says what was wrong and how to fix it."""

from __future__ import annotations


class GatebotError(Exception):
    """Root of every error gatebot raises on purpose."""


class ConfigError(GatebotError):
    """A setting in the environment or on the command line is wrong."""


class PackError(GatebotError):
    """A pack file is invalid. Carries the file, line and field so the message can point at it."""

    def __init__(self, file: str, line: int | None, field: str, message: str) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.message = message
        where = f"{file}:{line}" if line else file
        field_part = f" [{field}]" if field else ""
        super().__init__(f"{where}{field_part}: {message}")


class PackErrors(GatebotError):
    """Every problem found in one pack, reported together so a user fixes them in one pass."""

    def __init__(self, errors: list[PackError]) -> None:
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


class PluginLoadError(GatebotError):
    """A plugin could not be imported or registered; the others still load."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"plugin {name!r} failed to load: {reason}")


class StoreError(GatebotError):
    """The database could not be reached or migrated."""


class Unavailable(GatebotError):
    """The process cannot take this request now: a channel answers 503 with ``Retry-After``
    (``retry_after`` seconds) and changes nothing, so the client can simply send it again."""

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class DatabaseUnavailable(Unavailable, StoreError):
    """The database did not answer within its deadline, or refused the connection."""


class Overloaded(Unavailable):
    """The process already runs as many turns as it may (``GATEBOT_MAX_TURNS``): shed."""


class ProviderError(GatebotError):
    """A model provider failed (timeout, rate limit, server error). The turn falls back."""


class ChannelUnavailable(GatebotError):
    """A channel could not reach its platform now (no connection, DNS, a timeout). Unlike a
    refused token, trying again later can work: the app keeps retrying it in the background."""
