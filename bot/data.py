"""Governed data at run time: the pack's ``data.yaml`` tables read under their policy.

Each declared table is one read-only tool, ``data.TABLE``, and the answer path reads the tables
whose ``intents`` include the question's intent on its own (with the ``match`` filters taken from
the conversation's values). Every check is the runtime's, made from the declaration before any
query: the row policy's value must be the conversation's verified value (a value the customer
wrote, stored by the value gate) or its verified identity, else the read is refused; only
declared filters and declared columns; a column the field policy keeps back is refused by name,
masked columns are masked before anything sees them; more than :data:`ROW_CAP` rows, a join's
included, is refused with nothing returned. The rows allowed become facts keyed ``TABLE#KEY``,
which a reply cites like any knowledge fact. The record keeps each read's statement, its
parameters' names (never their values) and its row count, in the tool's ``finished`` or
``failed`` event (``detail.query``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import logging
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from bot.errors import ConfigError
from bot.extend.datasource import DataSource, DataSourceError, Query
from bot.extend.retriever import Fact
from bot.extend.tool import AUDIT, IDENTITY, Tool, ToolError, ToolRunner
from bot.packs.data import ROW_CAP, DataSpec, TableSpec

log = logging.getLogger(__name__)

PREFIX = "data."
MASK = "****"
#: Rows of one read that become facts; the rest are counted, not shown (a reply cites a few).
MAX_FACTS = 20
_KEY = re.compile(r"[^a-z0-9_-]+")


class DataAccess:
    """The pack's tables and the sources that hold them; a source whose ``url_env`` is unset is
    not configured, and its tables are not read (a debug line at start: `gatebot -vv run`)."""

    def __init__(self, spec: DataSpec, sources: dict[str, DataSource]) -> None:
        self.spec, self.sources = spec, sources

    @classmethod
    def build(
        cls,
        spec: DataSpec | None,
        kinds: Mapping[str, Callable[..., DataSource]],
        environ: Mapping[str, str] = os.environ,
    ) -> DataAccess | None:
        if spec is None:
            return None
        sources = {}
        for name, source in spec.sources.items():
            url = environ.get(source.url_env, "")
            if not url:
                log.debug("data source %s is not configured (%s unset)", name, source.url_env)
                continue
            if source.kind not in kinds:
                raise ConfigError(
                    f"data.yaml: source {name!r} is of kind {source.kind!r}, which no installed "
                    f"plugin gives (known: {', '.join(sorted(kinds)) or 'none'})"
                )
            sources[name] = kinds[source.kind](source, url)
        return cls(spec, sources)

    def tables(self) -> list[TableSpec]:
        """The tables that can be read: those of configured sources."""
        return [t for t in self.spec.tables.values() if t.source in self.sources]

    def tools(self, facts: Callable[[list[Fact]], None] | None = None) -> list[Tool]:
        return [ReadTable(self, table, facts) for table in self.tables()]

    def for_intent(self, intent: str | None) -> list[TableSpec]:
        return [t for t in self.tables() if intent and intent in t.intents]

    async def close(self) -> None:
        for source in self.sources.values():
            await source.close()


def tool_name(table: TableSpec) -> str:
    return PREFIX + table.name


class ReadTable(Tool):
    """``data.TABLE``: read rows of one declared table, under its policy."""

    recorded = False  # the arguments and rows stay out of the record; the statement is kept

    def __init__(
        self, access: DataAccess, table: TableSpec, facts: Callable[[list[Fact]], None] | None
    ) -> None:
        self.access, self.table, self.facts = access, table, facts
        self.parent = access.spec.table(table.join.table) if table.join else None
        self.name = tool_name(table)
        self.description = f"{table.description} Read-only; only the customer's own rows."
        self.schema = {
            "type": "object",
            "properties": {
                "filters": {
                    "type": "object",
                    "propertyNames": {"pattern": "^[a-z][a-z0-9_]*$"},
                    "additionalProperties": {"type": ["string", "integer"], "maxLength": 200},
                    "description": f"equality filters on: {', '.join(table.filters) or 'none'}",
                },
                "columns": {"type": "array", "items": {"type": "string", "maxLength": 63}},
            },
            "additionalProperties": False,
        }
        source = access.spec.sources[table.source]
        # The database's own statement timeout fires first, with the clearer message.
        self.timeout_s = source.timeout_ms / 1000 + 5.0

    def _policy(self) -> tuple[str, str]:
        governing = self.parent or self.table
        assert governing.policy is not None  # the pack check makes sure
        return governing.policy.column, governing.policy.ref

    def _policy_value(self, context: dict[str, Any]) -> str | None:
        _, ref = self._policy()
        if ref == "identity.user_id":
            return (context.get(IDENTITY) or {}).get("user_id")
        value = (context.get("values") or {}).get(ref.removeprefix("values."))
        return None if value is None else str(value)

    def check(self, arguments: dict[str, Any], context: dict[str, Any]) -> str | None:
        for column in arguments.get("filters") or {}:
            if column not in self.table.filters:
                return f"{column!r} is not a declared filter of {self.table.name}"
        for column in arguments.get("columns") or []:
            if column in self.table.never:
                return f"column {column!r} of {self.table.name} is never returned"
            if column not in self.table.columns:
                return f"{self.table.name} declares no column {column!r}"
        if self._policy_value(context) is None:
            _, ref = self._policy()
            what = "verified identity" if ref.startswith("identity.") else f"verified {ref[7:]}"
            return f"{self.table.name} is read only with the conversation's {what}, and it has none"
        return None

    def query(self, arguments: dict[str, Any], context: dict[str, Any]) -> Query:
        value = self._policy_value(context)
        if value is None:  # checked already; kept so run alone is never less safe
            raise ToolError(self.check(arguments, context) or "no verified value")
        column, _ = self._policy()
        asked = arguments.get("columns") or self.table.readable
        columns = [c for c in self.table.readable if c in asked or c == self.table.key]
        source = self.access.spec.sources[self.table.source]
        filters = {k: str(v) for k, v in (arguments.get("filters") or {}).items()}
        return Query(self.table, columns, column, value, filters, self.parent, ROW_CAP + 1,
                     source.timeout_ms)  # fmt: skip

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        if self.check(arguments, context):
            raise ToolError(str(self.check(arguments, context)))
        query = self.query(arguments, context)
        source = self.access.sources[self.table.source]
        try:
            found = await source.read(query)
        except DataSourceError as exc:
            raise DataReadError(str(exc), audit(self.table, exc.statement, exc.parameters)) from exc
        if len(found.rows) > ROW_CAP:
            why = f"more than {ROW_CAP:,} rows: over the cap, so none is returned"
            raise DataReadError(why, audit(self.table, found.statement, found.parameters, None))
        rows = [masked(self.table, row) for row in found.rows]
        if self.facts is not None:
            self.facts(row_facts(self.table, rows))
        return {
            "rows": rows[:MAX_FACTS],
            "count": len(rows),
            "note": f"{len(rows)} row(s) of {self.table.name}",
            AUDIT: audit(self.table, found.statement, found.parameters, len(rows)),
        }


class DataReadError(ToolError):
    """A read that ran and failed, with what was run for the record."""

    def __init__(self, message: str, query: dict[str, Any]) -> None:
        super().__init__(message)
        self.audit = query


def audit(
    table: TableSpec, statement: str, parameters: list[str], rows: int | None = 0
) -> dict[str, Any]:
    """What the record keeps of a read: never a parameter's value."""
    return {"table": table.name, "statement": statement, "parameters": parameters, "rows": rows}


def masked(table: TableSpec, row: dict[str, Any]) -> dict[str, Any]:
    return {k: MASK if k in table.masked else _plain(v) for k, v in row.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def row_facts(table: TableSpec, rows: list[dict[str, Any]]) -> list[Fact]:
    """Rows as facts a reply can cite: ``TABLE#KEY`` (``order_lines#7``), the columns as text."""
    out = []
    for row in rows[:MAX_FACTS]:
        key = _KEY.sub("-", str(row.get(table.key, "")).lower()).strip("-") or "row"
        text = "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in row.items())
        out.append(Fact(f"{table.name}#{key}", f"{table.name}: {text}", f"data:{table.name}",
                        "data", title=table.description))  # fmt: skip
    return out


async def read_for_answer(
    access: DataAccess | None,
    intent: str | None,
    context: dict[str, Any],
    runner: ToolRunner,
    events: list[Any],
) -> None:
    """The answer path's own reads: each table the intent names, filtered by its ``match``
    values when the conversation has them all, through ``runner`` (whose tools add the facts)."""
    if access is None:
        return
    values = context.get("values") or {}
    for table in access.for_intent(intent):
        slots = {column: ref.removeprefix("values.") for column, ref in table.match.items()}
        if any(slot not in values for slot in slots.values()):
            continue  # the question's own filter is not known yet: no broad read instead
        filters = {column: values[slot] for column, slot in slots.items()}
        await runner.call(tool_name(table), {"filters": filters}, context, events=events)
