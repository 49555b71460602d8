"""The Go agent, as the PostgreSQL tests play it: a second connection writing rows the way its
repository code does (version + 1 checked against the version read, `content_hash`, NOW())."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from memtui.stores.postgres.content_hash import content_hash
from memtui.stores.postgres.rows import COLUMNS, image
from tests.conftest import NOW

SELECT = "SELECT " + ", ".join(COLUMNS) + " FROM long_term_memory"
# the Go columns of a row that undo must restore exactly (not version, hash, updated_at)
RESTORED = tuple(c for c in COLUMNS if c not in ("version", "content_hash", "updated_at"))


def rows(dsn: str) -> dict[int, dict[str, Any]]:
    with psycopg.connect(dsn) as conn:
        return {r[0]: image(r) for r in conn.execute(SELECT + " ORDER BY id")}


def restored_part(table: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {i: {k: row[k] for k in RESTORED} for i, row in table.items()}


def _rehash(conn: psycopg.Connection[Any], ident: int) -> None:
    row = image(conn.execute(SELECT + " WHERE id = %s", [ident]).fetchone() or ())
    conn.execute(
        "UPDATE long_term_memory SET content_hash = %s WHERE id = %s",
        [content_hash({**row, "memory_id": ident}), ident],
    )


def insert(conn: psycopg.Connection[Any], content: str, **fields: Any) -> int:
    # created as of the tests' clock ($MEMTUI_NOW), not the server's: memtui refuses to plan
    # as of a time before the entries were created
    values = {"user_id": "u1", "content": content, "created_at": NOW, **fields}
    if "embedding" in values and values["embedding"] is not None:
        values["embedding"] = Jsonb(values["embedding"])
    names = ", ".join(values)
    marks = ", ".join(["%s"] * len(values))
    found = conn.execute(
        f"INSERT INTO long_term_memory ({names}) VALUES ({marks}) RETURNING id",
        list(values.values()),
    ).fetchone()
    assert found is not None
    _rehash(conn, found[0])
    return int(found[0])


def update(conn: psycopg.Connection[Any], ident: int, **fields: Any) -> None:
    """One optimistic write: the version read, checked and moved on, as the Go code does."""
    found = conn.execute("SELECT version FROM long_term_memory WHERE id = %s", [ident]).fetchone()
    assert found is not None
    sets = ", ".join(f"{k} = %s" for k in fields)
    done = conn.execute(
        f"UPDATE long_term_memory SET {sets}{', ' if sets else ''}version = version + 1, "
        "updated_at = NOW() WHERE id = %s AND version = %s",
        [*fields.values(), ident, found[0]],
    )
    assert done.rowcount == 1
    _rehash(conn, ident)


def tombstone(conn: psycopg.Connection[Any], ident: int) -> None:
    """A consolidation's delete: `deleted_at`, and `superseded`."""
    now = conn.execute("SELECT NOW()::timestamp").fetchone()
    assert now is not None
    update(conn, ident, deleted_at=now[0], superseded=True, superseded_at=now[0])
