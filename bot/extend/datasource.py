"""Data sources: where governed rows live (a SQL database, ...), as a plugin gives them.

A plugin implements ``register_data_sources`` and calls ``register(kind, factory)``; a pack's
``data.yaml`` names the kind of each source (``kind: sql``) and ``factory(spec, url)`` returns a
:class:`DataSource` for it, ``url`` being the value of the source's ``url_env`` variable. The
source only executes: the runtime (bot.data) has already decided, from the declaration alone,
which table, which columns, which rows (the row policy's column and the conversation's verified
value) and which declared filters; a source pushes exactly that down (filter and projection, bound
parameters, no aggregation, ``limit`` rows at most) within ``timeout_ms``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from bot.errors import GatebotError
from bot.packs.data import DataSourceSpec, TableSpec


@dataclass(frozen=True)
class Query:
    """One read, as the runtime built it from the declaration."""

    table: TableSpec
    columns: list[str]  # the projection: never a column the field policy keeps back
    policy_column: str  # rows where this column (of ``parent`` when joined) ...
    policy_value: str  # ... equals the conversation's verified value
    filters: dict[str, str] = field(default_factory=dict)  # declared filter column -> value
    parent: TableSpec | None = None  # a joined table: the policy is the parent's
    limit: int = 2001  # one over the cap, so a read over it is seen and refused
    timeout_ms: int = 2000


@dataclass
class Rows:
    """What a source read: the rows, and the statement as run with its parameters' names (never
    their values: the record keeps these)."""

    rows: list[dict[str, Any]]
    statement: str
    parameters: list[str]


class DataSourceError(GatebotError):
    """A read failed (timed out, unreachable, refused by the database). ``statement`` and
    ``parameters`` say what was run, when something was."""

    def __init__(self, message: str, statement: str = "", parameters: list[str] | None = None):
        super().__init__(message)
        self.statement, self.parameters = statement, parameters or []


class DataSource(ABC):
    kind: str = ""

    def __init__(self, spec: DataSourceSpec) -> None:
        self.spec = spec

    @abstractmethod
    async def read(self, query: Query) -> Rows:
        """Run ``query``. Raise :class:`DataSourceError` on failure, timeout included."""

    async def close(self) -> None:  # noqa: B027 (a source with nothing to release keeps it)
        """Release connections (the app calls it at shutdown)."""
