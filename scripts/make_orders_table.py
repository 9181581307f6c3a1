"""Create the sample pack's governed-data tables (``knowledge/acme/data.yaml``) in a database.

Makes ``orders`` and ``order_lines`` with a few rows for two customers (jo@example.com and
sam@example.com), replacing any already there. Any database SQLAlchemy speaks; the sample pack
reads them through the ``sql`` data source at ``ACME_DATA_URL``:

    python scripts/make_orders_table.py postgresql://user@127.0.0.1:5432/db [--schema acme]
    ACME_DATA_URL=postgresql://user@127.0.0.1:5432/db gatebot run

``--lines-for ORDER --lines N`` gives one order N lines (a join over the 2,000-row cap: N=2001).
"""

from __future__ import annotations

import argparse
import datetime as dt

import sqlalchemy as sa

from bot.store import normalise_url

ORDERS = [
    # order_id, customer_email, product, status, placed_on, card_last4, internal_note
    ("1001", "jo@example.com", "monitor", "shipped", dt.date(2026, 10, 2), "4242", "vip"),
    ("1002", "sam@example.com", "pipelines", "processing", dt.date(2026, 11, 3), "1881", "late"),
    ("1003", "jo@example.com", "status", "delivered", dt.date(2026, 9, 14), "4242", "none"),
]
LINES = [
    # line_id, order_id, item, quantity
    (1, "1001", "Acme Monitor seats", 5),
    (2, "1001", "Priority support", 1),
    (3, "1002", "Acme Pipelines runners", 2),
    (4, "1003", "Acme Status page", 1),
]


def tables(metadata: sa.MetaData) -> tuple[sa.Table, sa.Table]:
    orders = sa.Table(
        "orders",
        metadata,
        sa.Column("order_id", sa.String(12), primary_key=True),
        sa.Column("customer_email", sa.String(254), nullable=False, index=True),
        sa.Column("product", sa.String(40), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("placed_on", sa.Date, nullable=False),
        sa.Column("card_last4", sa.String(4), nullable=False),
        sa.Column("internal_note", sa.Text, nullable=False),
    )
    lines = sa.Table(
        "order_lines",
        metadata,
        sa.Column("line_id", sa.Integer, primary_key=True),
        sa.Column("order_id", sa.String(12), sa.ForeignKey("orders.order_id"), index=True),
        sa.Column("item", sa.String(80), nullable=False),
        sa.Column("quantity", sa.Integer, nullable=False),
    )
    return orders, lines


def make(url: str, schema: str | None = None, lines_for: str | None = None, lines: int = 0) -> None:
    """Create (or recreate) the tables with the sample rows, and ``lines`` more lines on
    ``lines_for``."""
    engine = sa.create_engine(normalise_url(url))
    metadata = sa.MetaData(schema=schema)
    orders, order_lines = tables(metadata)
    with engine.begin() as conn:
        if schema and engine.dialect.name == "postgresql":
            conn.execute(sa.schema.CreateSchema(schema, if_not_exists=True))
        metadata.drop_all(conn)
        metadata.create_all(conn)
        conn.execute(
            orders.insert(), [dict(zip(orders.c.keys(), row, strict=True)) for row in ORDERS]
        )
        rows = [dict(zip(order_lines.c.keys(), row, strict=True)) for row in LINES]
        rows += [
            {"line_id": 100 + n, "order_id": lines_for, "item": f"Bulk item {n}", "quantity": 1}
            for n in range(lines if lines_for else 0)
        ]
        conn.execute(order_lines.insert(), rows)
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="database URL, e.g. postgresql://user@127.0.0.1:5432/db")
    parser.add_argument("--schema", help="PostgreSQL schema to create them in (made if missing)")
    parser.add_argument("--lines-for", help="an order id to give --lines more lines")
    parser.add_argument("--lines", type=int, default=0)
    args = parser.parse_args()
    make(args.url, args.schema, args.lines_for, args.lines)
    extra = args.lines if args.lines_for else 0
    print(f"orders: {len(ORDERS)} rows; order_lines: {len(LINES) + extra} rows")


if __name__ == "__main__":
    main()
