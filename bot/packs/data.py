"""Governed data: ``data.yaml`` declares the tables the agent may read and the policy on each.

A source names a data-source kind a plugin gives (``sql``) and the environment variable holding
its address (with its credentials: never written in the pack). A table lists its columns; its row
policy says which rows a conversation may read (``customer_email = {values.email}``: a row whose
column equals the conversation's verified value, or ``{identity.user_id}``, its verified
identity); its field policy names columns never returned and columns masked. A table may instead
join a parent and read only the rows the parent's policy allows. The runtime builds every query
from this declaration (bot.data); nothing a customer or a model writes becomes SQL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.errors import PackError

if TYPE_CHECKING:
    from bot.packs.model import Pack

FILE = "data.yaml"
#: Rows one read may return, joins included: more is refused, never cut silently.
ROW_CAP = 2000
_name = {"type": "string", "pattern": "^[a-z][a-z0-9_]*$", "maxLength": 63}
_names = {"type": "array", "items": _name, "uniqueItems": True}
_REF = r"values\.[a-z][a-z0-9_]*|identity\.user_id"
_POLICY = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*=\s*\{(" + _REF + r")\}\s*$")
_VALUE = {"type": "string", "pattern": "^values\\.[a-z][a-z0-9_]*$"}


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


SOURCE = _obj(
    {
        "name": _name,
        "kind": _name,
        "url_env": {"type": "string", "pattern": "^[A-Z_][A-Z0-9_]*$"},
        "timeout_ms": {"type": "integer", "minimum": 1, "maximum": 60000},
        "description": {"type": "string"},
    },
    ["name", "kind", "url_env"],
)
# A join names this table's column and the parent's it equals (not YAML's ``on``: a boolean).
JOIN = _obj({"table": _name, "column": _name, "parent_column": _name}, ["table", "column"])
TABLE = _obj(
    {
        "name": _name,
        "source": _name,
        "description": {"type": "string", "minLength": 1},
        "key": _name,
        "columns": {**_names, "minItems": 1},
        "row_policy": {"type": "string", "pattern": _POLICY.pattern},
        "join": JOIN,
        "filters": _names,
        "never": _names,
        "masked": _names,
        "intents": {"type": "array", "items": {"type": "string"}},
        "match": {"type": "object", "propertyNames": _name, "additionalProperties": _VALUE},
    },
    ["name", "source", "description", "key", "columns"],
)  # fmt: skip
SCHEMA: dict[str, Any] = _obj(
    {
        "sources": {"type": "array", "items": SOURCE, "minItems": 1},
        "tables": {"type": "array", "items": TABLE, "minItems": 1},
    },
    ["sources", "tables"],
)


@dataclass(frozen=True)
class Policy:
    """A row is readable when ``column`` equals the conversation's ``ref``: ``values.SLOT`` or
    ``identity.user_id``."""

    column: str
    ref: str

    @property
    def slot(self) -> str | None:
        return self.ref.removeprefix("values.") if self.ref.startswith("values.") else None


@dataclass(frozen=True)
class Join:
    table: str
    column: str  # this table's column ...
    parent_column: str  # ... equal to the parent's


@dataclass
class DataSourceSpec:
    name: str
    kind: str
    url_env: str
    timeout_ms: int = 2000
    description: str = ""


@dataclass
class TableSpec:
    name: str
    source: str
    description: str
    key: str
    columns: list[str]
    policy: Policy | None = None
    join: Join | None = None
    filters: list[str] = field(default_factory=list)
    never: list[str] = field(default_factory=list)
    masked: list[str] = field(default_factory=list)
    intents: list[str] = field(default_factory=list)
    #: The runtime's own read when answering one of ``intents``: column -> ``values.SLOT``.
    match: dict[str, str] = field(default_factory=dict)

    @property
    def readable(self) -> list[str]:
        """The columns a read may return: declared, less those never returned."""
        return [c for c in self.columns if c not in self.never]


@dataclass
class DataSpec:
    sources: dict[str, DataSourceSpec]
    tables: dict[str, TableSpec]

    def table(self, name: str) -> TableSpec | None:
        return self.tables.get(name)


def data_spec(data: dict[str, Any]) -> DataSpec:
    sources = {s["name"]: DataSourceSpec(**s) for s in data.get("sources", [])}
    tables = {}
    for raw in data.get("tables", []):
        raw = dict(raw)
        policy = raw.pop("row_policy", None)
        join = raw.pop("join", None)
        found = _POLICY.match(policy) if policy else None
        tables[raw["name"]] = TableSpec(
            **raw,
            policy=Policy(found.group(1), found.group(2)) if found else None,
            join=Join(join["table"], join["column"], join.get("parent_column", join["column"]))
            if join
            else None,
        )
    return DataSpec(sources, tables)


def check(pack: Pack, raw: dict[str, Any], error: Any) -> list[PackError]:
    """What the schema cannot see: names that resolve, and every table under a policy."""
    spec: DataSpec = pack.data
    slots, intents = {s.name for s in pack.slots}, {i.name for i in pack.intents}
    out: list[PackError] = []
    names = [t["name"] for t in raw.get("tables", [])]
    for i, table in enumerate(spec.tables.values()):
        where = ("tables", i)
        if names.count(table.name) > 1:
            out.append(error((*where, "name"), f"table {table.name!r} is declared twice"))
        if table.source not in spec.sources:
            out.append(error((*where, "source"), f"unknown source {table.source!r}"))
        out += _check_columns(table, where, error)
        out += _check_policy(spec, table, where, slots, error)
        for j, intent in enumerate(table.intents):
            if intent not in intents:
                out.append(error((*where, "intents", j), f"unknown intent {intent!r}"))
        for column, ref in table.match.items():
            if ref.removeprefix("values.") not in slots:
                out.append(error((*where, "match", column), f"{ref!r} is not a playbook slot"))
    return out


def _check_columns(table: TableSpec, where: tuple[Any, ...], error: Any) -> list[PackError]:
    declared = set(table.columns)
    named = [("key", table.key)] + [(k, c) for k in ("filters", "never", "masked") for c in
                                    getattr(table, k)]  # fmt: skip
    named += [("match", c) for c in table.match]
    out = [
        error((*where, part), f"column {column!r} is not one of the table's columns")
        for part, column in named
        if column not in declared
    ]
    if table.key in table.never:
        out.append(error((*where, "never"), "the key column cannot be one never returned"))
    out += [
        error((*where, "match", c), f"column {c!r} must be one of the table's filters")
        for c in table.match
        if c not in table.filters
    ]
    return out


def _check_policy(
    spec: DataSpec, table: TableSpec, where: tuple[Any, ...], slots: set[str], error: Any
) -> list[PackError]:
    if (table.policy is None) == (table.join is None):
        return [error(where, "a table needs exactly one of row_policy and join")]
    if table.policy is not None:
        out = []
        if table.policy.column not in table.columns:
            out.append(error((*where, "row_policy"), f"unknown column {table.policy.column!r}"))
        if table.policy.slot is not None and table.policy.slot not in slots:
            out.append(error((*where, "row_policy"), f"{table.policy.ref!r} is not a slot"))
        return out
    assert table.join is not None
    parent = spec.tables.get(table.join.table)
    if parent is None or parent.policy is None or parent.source != table.source:
        why = "a table of the same source with a row_policy"
        return [error((*where, "join", "table"), f"{table.join.table!r} must be {why}")]
    out = []
    if table.join.column not in table.columns:
        out.append(error((*where, "join", "column"), f"unknown column {table.join.column!r}"))
    if table.join.parent_column not in parent.columns:
        why = f"{table.join.parent_column!r} is not a column of {parent.name!r}"
        out.append(error((*where, "join", "parent_column"), why))
    return out
