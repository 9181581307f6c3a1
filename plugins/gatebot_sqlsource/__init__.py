"""The ``sql`` data source: governed reads from any database SQLAlchemy speaks (tested on
PostgreSQL).

It runs exactly the read the runtime built (bot.data): a SELECT of the declared columns, joined
to the parent table when the declaration says so, WHERE the policy column equals a bound parameter
and each declared filter equals one, LIMIT one over the cap. The statement is SQLAlchemy Core
over table and column names from the pack, never text from a customer or a model, and every value
is a bound parameter. On PostgreSQL the transaction is read-only with ``statement_timeout`` set
from the source's ``timeout_ms``; elsewhere the read is bounded by the tool's own timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from bot.extend.datasource import DataSource, DataSourceError, Query, Rows
from bot.hookspecs import hookimpl
from bot.packs.data import DataSourceSpec, TableSpec
from bot.store import normalise_url


def _table(spec: TableSpec) -> sa.TableClause:
    return sa.table(spec.name, *(sa.column(c) for c in spec.columns))


def statement(query: Query) -> sa.Select[Any]:
    """The read as SQLAlchemy Core: projection, join, policy and filters pushed down."""
    table = _table(query.table)
    source: sa.FromClause = table
    governing = table
    if query.parent is not None and query.table.join is not None:
        governing = _table(query.parent)
        on = table.c[query.table.join.column] == governing.c[query.table.join.parent_column]
        source = table.join(governing, on)
    stmt = sa.select(*(table.c[c] for c in query.columns)).select_from(source)
    policy: sa.BindParameter[str] = sa.bindparam(
        f"policy_{query.policy_column}", query.policy_value
    )
    stmt = stmt.where(governing.c[query.policy_column] == policy)
    for column, value in sorted(query.filters.items()):
        stmt = stmt.where(table.c[column] == sa.bindparam(f"filter_{column}", value))
    cap = sa.bindparam("row_cap", query.limit, type_=sa.Integer)
    return stmt.order_by(table.c[query.table.key]).limit(cap)


class SqlSource(DataSource):
    kind = "sql"

    def __init__(self, spec: DataSourceSpec, url: str) -> None:
        super().__init__(spec)
        url = normalise_url(url)
        self.engine = sa.create_engine(url, pool_pre_ping=True, pool_size=2, max_overflow=2) if (
            not url.startswith("sqlite")
        ) else sa.create_engine(url)  # fmt: skip
        self.postgres = self.engine.dialect.name == "postgresql"

    async def read(self, query: Query) -> Rows:
        return await asyncio.to_thread(self._read, query)

    def _read(self, query: Query) -> Rows:
        stmt = statement(query)
        compiled = stmt.compile(dialect=self.engine.dialect)
        text, names = str(compiled), sorted(compiled.params)
        try:
            with self.engine.connect() as conn, conn.begin():
                if self.postgres:
                    conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                    # SET takes no bound parameter; the value is the pack's integer.
                    conn.exec_driver_sql(f"SET LOCAL statement_timeout = {int(query.timeout_ms)}")
                rows = [dict(r) for r in conn.execute(stmt).mappings()]
        except DBAPIError as exc:
            raise DataSourceError(_why(exc, query.timeout_ms), text, names) from None
        except SQLAlchemyError as exc:
            raise DataSourceError(f"the read failed: {type(exc).__name__}", text, names) from None
        return Rows(rows, text, names)

    async def close(self) -> None:
        await asyncio.to_thread(self.engine.dispose)


def _why(exc: DBAPIError, timeout_ms: int) -> str:
    """What went wrong, in words that hold no row and no parameter value."""
    if getattr(exc.orig, "sqlstate", None) == "57014":  # PostgreSQL: query_canceled
        return f"statement timeout: the read took over {timeout_ms} ms and was cancelled"
    if exc.connection_invalidated or isinstance(exc, sa.exc.OperationalError):
        return "the database could not be reached or refused the read"
    return f"the database refused the read ({type(exc.orig).__name__})"


@hookimpl
def register_data_sources(register: Callable[[str, Any], None]) -> None:
    register("sql", SqlSource)
