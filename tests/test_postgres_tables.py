"""Tables that differ from what the Go system writes: each variant is read, changed, planned,
applied and undone (NULL kept NULL, values written back as the table declares them, no false
"changed since memtui read it"), or refused at open in one line naming the column."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from memtui.errors import MemtuiError
from memtui.service import EntryEdit, Service
from tests.pg_agent import insert
from tests.pg_server import PgServer, pg_server  # noqa: F401

_NULLABLE = (
    "ALTER TABLE long_term_memory ALTER COLUMN {0} DROP NOT NULL, ALTER COLUMN {0} DROP DEFAULT"
)
_NOW = datetime(2026, 11, 30, 12, 0, 0, 654_321, tzinfo=UTC)
_TIMES = ("created_at", "last_accessed", "updated_at", "superseded_at", "deleted_at")

# variant → the statements that make the Go table into it (after the rows are in)
HANDLED: dict[str, list[str]] = {
    "version NULL": [
        _NULLABLE.format("version"),
        "UPDATE long_term_memory SET version = NULL WHERE id % 2 = 1",
    ],
    "content NULL": [
        _NULLABLE.format("content"),
        "UPDATE long_term_memory SET content = NULL WHERE id = 5",
    ],
    "tags and supersedes NULL": [
        _NULLABLE.format("tags"),
        _NULLABLE.format("supersedes"),
        "UPDATE long_term_memory SET tags = NULL, supersedes = NULL",
    ],
    "importance NUMERIC": [
        "ALTER TABLE long_term_memory ALTER COLUMN importance TYPE NUMERIC",
    ],
    "importance NUMERIC(4,3)": [
        "ALTER TABLE long_term_memory ALTER COLUMN importance TYPE NUMERIC(4,3)",
    ],
    "importance REAL": [
        "ALTER TABLE long_term_memory ALTER COLUMN importance TYPE REAL",
    ],
    "times TIMESTAMPTZ": [
        f"ALTER TABLE long_term_memory ALTER COLUMN {c} TYPE TIMESTAMPTZ "
        f"USING {c} AT TIME ZONE 'UTC'"
        for c in _TIMES
    ],
    "times TIMESTAMP(0)": [
        f"ALTER TABLE long_term_memory ALTER COLUMN {c} TYPE TIMESTAMP(0)" for c in _TIMES
    ],
    "created_at DATE": [
        "ALTER TABLE long_term_memory ALTER COLUMN created_at TYPE DATE",
    ],
    "embedding JSON": [
        "ALTER TABLE long_term_memory ALTER COLUMN embedding TYPE JSON",
    ],
    "embedding TEXT": [
        "ALTER TABLE long_term_memory ALTER COLUMN embedding TYPE TEXT",
    ],
    "embedding a JSON string or object": [
        "UPDATE long_term_memory SET embedding = to_jsonb(embedding::text) WHERE id = 1",
        'UPDATE long_term_memory SET embedding = \'{"model": "x"}\' WHERE id = 3',
    ],
}

REFUSED: dict[str, tuple[list[str], str, str]] = {
    "a view": (
        ["CREATE VIEW memory_view AS SELECT * FROM long_term_memory"],
        "#table=memory_view",
        "memory_view is a view, not a table",
    ),
    "importance TEXT": (
        ["ALTER TABLE long_term_memory ALTER COLUMN importance TYPE TEXT"],
        "",
        "long_term_memory.importance is text; memtui reads it as a number",
    ),
    "created_at TEXT": (
        ["ALTER TABLE long_term_memory ALTER COLUMN created_at TYPE TEXT"],
        "",
        "long_term_memory.created_at is text; memtui reads it as a time",
    ),
    "a column missing": (
        ["ALTER TABLE long_term_memory DROP COLUMN slot_hint"],
        "",
        "long_term_memory has no column slot_hint",
    ),
}


def _seed(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        insert(conn, "用户喜欢咖啡", importance=0.8, embedding=[0.5, -0.25, 1e-9], tags=["drink"])
        insert(conn, "用户喜欢咖啡", importance=0.6, embedding=[0.5, -0.25, 1e-9])
        insert(conn, "the user lives in Berlin", importance=0.7, embedding=[0.1, 0.2, 0.3])
        insert(conn, "the user lives in Berlin", importance=0.5)
        insert(conn, "untouched", importance=0.5, supersedes=[4])


def _table(dsn: str) -> list[tuple[Any, ...]]:
    """Every row as the server holds it, each value as its column's text (NULL as None)."""
    with psycopg.connect(dsn) as conn:
        names = [
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'long_term_memory' ORDER BY ordinal_position"
            )
        ]
        kept = [n for n in names if n not in ("version", "content_hash", "updated_at")]
        listed = ", ".join(f"{n}::text" for n in kept)
        return conn.execute(f"SELECT {listed} FROM long_term_memory ORDER BY id").fetchall()


@pytest.mark.parametrize("variant", sorted(HANDLED))
def test_a_table_variant_reads_changes_and_undoes_as_it_is_declared(
    pg_server: PgServer,  # noqa: F811
    variant: str,
) -> None:
    dsn = pg_server.create_database()
    _seed(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in HANDLED[variant]:
            conn.execute(statement)
    before = _table(dsn)
    svc = Service(clock=lambda: _NOW)  # a fraction of a second: a TIMESTAMP(0) rounds it

    store = svc.stores.open(dsn)
    assert len(store) == 5
    assert all(isinstance(m.content, str) for m in store.memories())
    coffee = store.get("1")
    if variant == "embedding a JSON string or object":
        assert coffee.embedding == (0.5, -0.25, 1e-9)  # the string holds the array
        assert store.get("3").embedding is None  # not numbers: kept as it is
    else:
        assert coffee.embedding == (0.5, -0.25, 1e-9)
    svc.entries.edit(store, "1", EntryEdit(importance=0.7))
    # every step on a store opened afresh, as separate commands run it
    store = svc.stores.open(dsn)
    assert abs(store.get("1").importance - 0.7) < 1e-6
    plan = svc.plans.plan(store, svc.profiles.profile(store))
    assert plan.actions
    svc.plans.apply(store, plan)
    with psycopg.connect(dsn, autocommit=True) as agent:  # a write that changes nothing shown
        agent.execute("UPDATE long_term_memory SET version = version + 1")
    store = svc.stores.open(dsn)
    svc.entries.edit(store, "5", EntryEdit(tags=("later",)))
    for _ in range(3):  # the edit, the plan (re-based on the agent's write), the first edit
        store = svc.stores.open(dsn)
        svc.history.undo(store)
    assert _table(dsn) == before
    store = svc.stores.open(dsn)
    assert [m.id for m in store.memories()] == ["1", "2", "3", "4", "5"]
    assert not store.changed_on_disk()


@pytest.mark.parametrize("variant", sorted(REFUSED))
def test_a_table_memtui_cannot_use_is_refused_at_open_in_one_line(
    pg_server: PgServer,  # noqa: F811
    variant: str,
) -> None:
    dsn = pg_server.create_database()
    _seed(dsn)
    statements, suffix, message = REFUSED[variant]
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)
    with pytest.raises(MemtuiError) as refused:
        Service().stores.open(dsn + suffix)
    text = str(refused.value)
    assert message in text and "\n" not in text
    assert "postgresql://postgres@127.0.0.1" in text


def test_a_merge_into_a_table_whose_id_is_an_identity_column(
    pg_server: PgServer,  # noqa: F811
) -> None:
    dsn = pg_server.create_database()
    _seed(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE long_term_memory ALTER COLUMN id DROP DEFAULT")
        conn.execute("DROP SEQUENCE long_term_memory_id_seq")
        conn.execute(
            "ALTER TABLE long_term_memory ALTER COLUMN id "
            "ADD GENERATED ALWAYS AS IDENTITY (START WITH 100)"
        )
    before = _table(dsn)
    svc = Service()
    tx = svc.merges.merge(svc.stores.open(dsn), ["3", "4"], content="the user lives in Berlin")
    assert tx.details["merged"] == "100"  # the identity's next value
    store = svc.stores.open(dsn)
    assert store.get("100").supersedes == ("3", "4")
    svc.history.undo(store)
    after = {row[0]: row for row in _table(dsn)}
    assert [after[row[0]] for row in before] == before
    assert after["100"][-1] is not None  # the merged row, a tombstone now
