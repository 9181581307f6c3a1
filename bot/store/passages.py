"""Knowledge passages and embedding vectors in the store (SQLite or PostgreSQL).

Owns the rows behind the gatebot_knowledge plugin: passages per pack (synced by key, so unchanged
rows are never rewritten), vectors as float32 bytes keyed by (hash of the embedded text, model
id), the pack version the passages were cut from, and each pack's BM25 matrix as arrays. Plain
functions over a :class:`Store`: the
plugin is optional, so the Store class does not grow methods for it.

Reads go through SQLAlchemy Core rather than ORM objects: loading 100,000 passages as model
instances costs seconds that a start-up cannot spare.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import numpy as np
import sqlalchemy as sa
from sqlmodel import SQLModel

from bot.store import Store
from bot.store.models import (
    KnowledgeBm25,
    KnowledgePack,
    KnowledgePassage,
    KnowledgeVector,
    now,
)

_passages = SQLModel.metadata.tables[KnowledgePassage.__tablename__]
_vectors = SQLModel.metadata.tables[KnowledgeVector.__tablename__]
_packs = SQLModel.metadata.tables[KnowledgePack.__tablename__]
_bm25 = SQLModel.metadata.tables[KnowledgeBm25.__tablename__]

#: Rows per IN list or insert batch: under every driver's parameter limit.
CHUNK = 500


class PassageRow(NamedTuple):
    key: str
    position: int
    kind: str
    title: str
    text: str
    source: str
    keywords: list[str]
    content_hash: str
    title_hash: str


_FIELDS = PassageRow._fields


class Bm25Row(NamedTuple):
    """A saved BM25 index: the arrays of a CSC matrix and the word of each column."""

    num_docs: int
    vocab: list[str]
    data: np.ndarray  # float32
    indices: np.ndarray  # int32
    indptr: np.ndarray  # int64


def _chunks(items: list[Any], size: int = CHUNK) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def stored_version(store: Store, pack: str) -> str | None:
    """The pack version the stored passages were cut from; None if the pack was never indexed."""
    with store.engine.connect() as conn:
        return conn.execute(
            sa.select(_packs.c.version).where(_packs.c.pack == pack)
        ).scalar_one_or_none()


def sync_passages(store: Store, pack: str, version: str, rows: list[PassageRow]) -> dict[str, int]:
    """Make the stored passages of ``pack`` equal ``rows``, writing only what differs, in one
    transaction. Returns how many were added, changed, removed and kept."""
    wanted = {r.key: r for r in rows}
    if len(wanted) != len(rows):
        raise ValueError(f"passage keys of pack {pack!r} are not unique")
    counts = {"added": 0, "changed": 0, "removed": 0, "kept": 0}
    cols = [_passages.c[name] for name in _FIELDS]
    with store.engine.begin() as conn:
        have = {
            r.key: PassageRow(*r)
            for r in conn.execute(sa.select(*cols).where(_passages.c.pack == pack))
        }
        gone = [k for k in have if k not in wanted]
        changed = [k for k, r in wanted.items() if k in have and have[k] != r]
        added = [k for k in wanted if k not in have]
        for keys in _chunks(gone + changed):
            conn.execute(
                _passages.delete().where(_passages.c.pack == pack, _passages.c.key.in_(keys))
            )
        stamp = now()
        for keys in _chunks(changed + added):
            conn.execute(
                _passages.insert(),
                [{"pack": pack, "updated_at": stamp, **wanted[k]._asdict()} for k in keys],
            )
        conn.execute(_packs.delete().where(_packs.c.pack == pack))
        conn.execute(
            _packs.insert().values(pack=pack, version=version, passages=len(rows), indexed_at=stamp)
        )
        counts.update(
            added=len(added),
            changed=len(changed),
            removed=len(gone),
            kept=len(wanted) - len(added) - len(changed),
        )
    return counts


def load_passages(store: Store, pack: str) -> list[PassageRow]:
    """The stored passages of ``pack`` in reading order."""
    cols = [_passages.c[name] for name in _FIELDS]
    stmt = sa.select(*cols).where(_passages.c.pack == pack).order_by(_passages.c.position)
    with store.engine.connect() as conn:
        return [PassageRow(*r) for r in conn.execute(stmt)]


def encode_vector(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def decode_vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4")


def missing_vectors(store: Store, model: str, hashes: Iterable[str]) -> list[str]:
    """Those of ``hashes`` with no stored vector under ``model``, in the order given, once each."""
    wanted = list(dict.fromkeys(hashes))
    have: set[str] = set()
    with store.engine.connect() as conn:
        for part in _chunks(wanted):
            stmt = sa.select(_vectors.c.content_hash).where(
                _vectors.c.model == model, _vectors.c.content_hash.in_(part)
            )
            have.update(conn.execute(stmt).scalars())
    return [h for h in wanted if h not in have]


def put_vectors(store: Store, model: str, vectors: dict[str, np.ndarray]) -> int:
    """Store vectors by content hash; a vector another writer stored first is kept. Returns how
    many were offered."""
    dialect = store.dialect
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        stmt: Any = pg_insert(_vectors).on_conflict_do_nothing()
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        stmt = sqlite_insert(_vectors).on_conflict_do_nothing()
    else:  # other databases: plain inserts (callers only offer missing vectors)
        stmt = _vectors.insert()
    stamp = now()
    rows = [
        {
            "content_hash": h,
            "model": model,
            "dim": int(v.shape[-1]),
            "vector": encode_vector(v),
            "created_at": stamp,
        }
        for h, v in vectors.items()
    ]
    with store.engine.begin() as conn:
        for part in _chunks(rows):
            conn.execute(stmt, part)
    return len(rows)


def pack_vectors(store: Store, pack: str, model: str, field: str) -> dict[str, np.ndarray]:
    """Stored vectors of one pack's passages under ``model``, by hash; ``field`` is
    ``content_hash`` (title + text) or ``title_hash``. One join, no long IN lists."""
    if field not in ("content_hash", "title_hash"):
        raise ValueError(f"field must be content_hash or title_hash, not {field!r}")
    keys = sa.select(_passages.c[field].label("h")).where(_passages.c.pack == pack).distinct()
    sub = keys.subquery()
    stmt = sa.select(_vectors.c.content_hash, _vectors.c.vector).join(
        sub, sub.c.h == _vectors.c.content_hash
    )
    stmt = stmt.where(_vectors.c.model == model)
    with store.engine.connect() as conn:
        return {h: decode_vector(blob) for h, blob in conn.execute(stmt)}


def vectors_by_hash(store: Store, model: str, hashes: list[str]) -> dict[str, np.ndarray]:
    """Stored vectors under ``model`` for these text hashes (texts no passage column holds)."""
    out: dict[str, np.ndarray] = {}
    with store.engine.connect() as conn:
        for chunk in _chunks(sorted(set(hashes))):
            stmt = sa.select(_vectors.c.content_hash, _vectors.c.vector).where(
                _vectors.c.model == model, _vectors.c.content_hash.in_(chunk)
            )
            out.update({h: decode_vector(blob) for h, blob in conn.execute(stmt)})
    return out


def prune_vectors(store: Store) -> int:
    """Delete vectors no stored passage refers to (edited or removed text). Returns how many."""
    used = sa.union(
        sa.select(_passages.c.content_hash), sa.select(_passages.c.title_hash)
    ).subquery()
    stmt = _vectors.delete().where(_vectors.c.content_hash.not_in(sa.select(used.c[0])))
    with store.engine.begin() as conn:
        result = conn.execute(stmt)
        return int(result.rowcount or 0)


def save_bm25(store: Store, pack: str, version: str, row: Bm25Row) -> None:
    """Keep ``pack``'s BM25 arrays, replacing any older ones."""
    values = {
        "pack": pack,
        "version": version,
        "num_docs": row.num_docs,
        # Words never hold a newline (the tokenizer keeps letters and digits only).
        "vocab": "\n".join(row.vocab).encode("utf-8"),
        "data": np.ascontiguousarray(row.data, dtype="<f4").tobytes(),
        "indices": np.ascontiguousarray(row.indices, dtype="<i4").tobytes(),
        "indptr": np.ascontiguousarray(row.indptr, dtype="<i8").tobytes(),
        "built_at": now(),
    }
    with store.engine.begin() as conn:
        conn.execute(_bm25.delete().where(_bm25.c.pack == pack))
        conn.execute(_bm25.insert().values(**values))


def load_bm25(store: Store, pack: str, version: str) -> Bm25Row | None:
    """``pack``'s BM25 arrays if they were saved for ``version``; None otherwise."""
    cols = [_bm25.c[c] for c in ("num_docs", "vocab", "data", "indices", "indptr")]
    stmt = sa.select(*cols).where(_bm25.c.pack == pack, _bm25.c.version == version)
    with store.engine.connect() as conn:
        found = conn.execute(stmt).first()
    if found is None:
        return None
    num_docs, vocab, data, indices, indptr = found
    words = bytes(vocab).decode("utf-8").split("\n") if vocab else []
    return Bm25Row(
        int(num_docs),
        words,
        np.frombuffer(data, dtype="<f4"),
        np.frombuffer(indices, dtype="<i4"),
        np.frombuffer(indptr, dtype="<i8"),
    )
