"""Opening and reading the Go system's `long_term_memory` table, from the service and the CLI;
every row memtui writes carries Go's hash and the outbox events Go writes; no password leaks."""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memtui.errors import MemtuiError
from memtui.model import Status
from memtui.service import EntryEdit, Service
from memtui.stores.postgres import INSTALL_HINT
from memtui.stores.postgres.content_hash import content_hash
from memtui.stores.postgres.rows import Side, to_memory
from memtui.stores.postgres.vector import vector
from tests.conftest import CliResult
from tests.pg_agent import insert, rows, tombstone, update
from tests.pg_server import PgServer, pg_dsn, pg_server  # noqa: F401


def _seed(dsn: str) -> dict[str, int]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        ids = {
            "coffee": insert(
                conn,
                "用户喜欢咖啡 <b>&</b>",
                importance=0.8,
                tags=["drink", "src:user"],
                category="preference",
                embedding=[0.5, -0.25, 1e-9],
                embedding_model="text-embedding-3-small",
                slot_hint="drink.favourite",
            ),
            "legacy": insert(conn, "written before users", user_id=None, importance=0.3),
            "quarantined": insert(conn, "maybe", quarantined=True, quarantine_reason="unverified"),
            "gone": insert(conn, "deleted by the agent", user_id="u2"),
        }
        ids["new"] = insert(conn, "replaces the old one", supersedes=[ids["legacy"]])
        now = conn.execute("SELECT NOW()::timestamp").fetchone()
        assert now is not None
        update(conn, ids["legacy"], superseded=True, superseded_at=now[0])
        tombstone(conn, ids["gone"])
    return ids


def test_rows_map_to_entries_as_longterm_records_do(pg_dsn: str) -> None:  # noqa: F811
    ids = _seed(pg_dsn)
    store = Service().stores.open(pg_dsn)
    assert store.format_name == "postgres"
    assert len(store) == 5  # live rows and the tombstone
    coffee = store.get(str(ids["coffee"]))
    assert coffee.content == "用户喜欢咖啡 <b>&</b>"
    assert (coffee.importance, coffee.category, coffee.tags) == (
        0.8,
        "preference",
        ("drink", "src:user"),
    )
    assert coffee.embedding == (0.5, -0.25, 1e-9)
    assert coffee.extra["slot_hint"] == "drink.favourite"
    assert coffee.extra["embedding_model"] == "text-embedding-3-small"
    assert coffee.version == 1 and coffee.status is Status.ACTIVE
    legacy = store.get(str(ids["legacy"]))
    assert legacy.user_id == "legacy"
    assert legacy.status is Status.SUPERSEDED
    assert legacy.superseded_by == str(ids["new"])
    assert legacy.superseded_at is not None
    assert store.get(str(ids["new"])).supersedes == (str(ids["legacy"]),)
    assert store.get(str(ids["quarantined"])).status is Status.QUARANTINED
    gone = store.get(str(ids["gone"]))
    assert gone.status is Status.DELETED and gone.version == 2


def test_the_fast_read_gives_what_the_row_mapping_gives(pg_dsn: str) -> None:  # noqa: F811
    ids = _seed(pg_dsn)
    svc = Service()
    store = svc.stores.open(pg_dsn)
    # a status in memtui's side table
    svc.entries.set_status(store, str(ids["coffee"]), Status.ARCHIVED)
    again = svc.stores.open(pg_dsn)
    table = rows(pg_dsn)
    sides = {str(ids["coffee"]): Side(Status.ARCHIVED.value)}
    for ident, row in table.items():
        mapped = to_memory(row, sides.get(str(ident)))
        loaded = again.get(str(ident))
        assert loaded == mapped.with_(superseded_by=loaded.superseded_by), ident
    coffee = again.get(str(ids["coffee"]))
    assert coffee.status is Status.ARCHIVED
    assert list(coffee.embedding or ()) == [0.5, -0.25, 1e-9]


def test_entries_come_in_the_order_of_their_row_ids(pg_dsn: str) -> None:  # noqa: F811
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        made = [insert(conn, f"memory {n}") for n in range(12)]  # ids 1…12: "10" < "2" as text
    assert [m.id for m in Service().stores.open(pg_dsn).memories()] == [
        str(i) for i in sorted(made)
    ]


def test_an_embedding_is_packed_and_equals_its_numbers() -> None:
    packed = vector([0.5, -0.25, 1, 1e-9])
    numbers = (0.5, -0.25, 1.0, 1e-9)
    assert packed == numbers and numbers == packed  # either side (a ledger's entry vs a row's)
    assert packed != (0.5, -0.25, 1.0) and packed != (0.5, -0.25, 1.0, 2e-9)
    assert list(packed) == [0.5, -0.25, 1.0, 1e-9]
    assert copy.deepcopy(packed) == packed and pickle.loads(pickle.dumps(packed)) == packed
    big = vector([0.1] * 1536)
    assert sys.getsizeof(big) < 8 * 1536 + 200  # doubles, not 1,536 float objects


def test_one_user_only(pg_dsn: str) -> None:  # noqa: F811
    ids = _seed(pg_dsn)
    store = Service().stores.open(pg_dsn + "#user=u2")
    assert [m.id for m in store.memories()] == [str(ids["gone"])]


def test_the_cli_takes_a_database_url_wherever_a_store_path_goes(
    pg_dsn: str,  # noqa: F811
    cli: Callable[..., CliResult],
) -> None:
    ids = _seed(pg_dsn)
    listed = cli("list", pg_dsn.replace("postgresql://", "postgres://"), "--json")
    assert listed.code == 0, listed.err
    assert {e["id"] for e in json.loads(listed.out)} == {
        str(ids["coffee"]),
        str(ids["quarantined"]),
        str(ids["new"]),
    }
    edited = cli("edit", pg_dsn, str(ids["coffee"]), "--content", "likes coffee")
    assert edited.code == 0, edited.err
    assert rows(pg_dsn)[ids["coffee"]]["content"] == "likes coffee"
    history = cli("history", pg_dsn)
    assert history.code == 0 and "edit" in history.out


def test_a_missing_table_or_server_is_one_line(
    pg_server: PgServer,  # noqa: F811
    cli: Callable[..., CliResult],
) -> None:
    empty = pg_server.create_database(go_schema=False)
    missing = cli("list", empty)
    assert missing.code == 1
    assert "no table long_term_memory" in missing.err and "Traceback" not in missing.err
    other = cli("list", empty + "#table=agent_memory")
    assert "no table agent_memory" in other.err


def test_without_psycopg_one_line_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, cli: Callable[..., CliResult]
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    result = cli("list", "postgresql://agent@127.0.0.1:1/memory")
    assert result.code == 1
    assert result.err.strip() == f"memtui: {INSTALL_HINT}"
    assert 'pip install "memtui[postgres]"' in result.err


def test_a_password_in_the_url_is_never_written_or_shown(
    pg_server: PgServer,  # noqa: F811
    cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    secret = "s3cr3t-Pa55"
    dsn = pg_server.create_database().replace("postgres@", f"postgres:{secret}@")
    ids = _seed(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        insert(conn, "用户喜欢咖啡 <b>&</b>", importance=0.5, category="preference")
    plan = tmp_path / "p.json"
    shown = [
        cli("list", dsn),
        cli("stats", dsn),
        cli("edit", dsn, str(ids["coffee"]), "--importance", "0.6"),
        cli("plan", dsn, "--out", plan),
        cli("apply", dsn, plan, "--yes"),
        cli("history", dsn, "--json"),
        cli("backups", dsn),
        cli("undo", dsn),
        # a server that is not there: the driver's message is shown, the password is not
        cli("list", dsn.replace(f":{pg_server.port}/", ":1/")),
    ]
    assert all(r.code == 0 for r in shown[:-1]), [r.err for r in shown]
    assert shown[-1].code == 1 and "cannot connect" in shown[-1].err
    assert "postgresql://postgres@127.0.0.1" in shown[0].out + shown[1].out + shown[3].out
    for result in shown:
        assert secret not in result.out + result.err
    assert secret not in plan.read_text()
    with psycopg.connect(dsn) as conn:
        ledger = " ".join(r[0] for r in conn.execute("SELECT body FROM memtui_ledger"))
        backups = conn.execute("SELECT string_agg(row_image, ' ') FROM memtui_backup").fetchone()
    assert ledger and secret not in ledger
    assert backups is not None and secret not in backups[0]


def _outbox(dsn: str) -> list[dict[str, Any]]:
    with psycopg.connect(dsn) as conn:
        cur = conn.execute(
            "SELECT aggregate_id, user_id, aggregate_version, event_type, target, payload, "
            "status, event_id FROM memory_outbox ORDER BY id"
        )
        names = [d.name for d in cur.description or []]
        return [dict(zip(names, r, strict=True)) for r in cur]


def test_writes_carry_go_hashes_and_the_outbox_events_go_writes(pg_dsn: str) -> None:  # noqa: F811
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        a = insert(conn, "用户喜欢咖啡", importance=0.8, tags=["drink"])
        b = insert(conn, "用户非常喜欢咖啡", importance=0.7)
        c = insert(conn, "stale", importance=0.2)
        conn.execute("DELETE FROM memory_outbox")
    svc = Service()
    store = svc.stores.open(pg_dsn)

    # an update: upsert the vector and the graph node
    svc.entries.edit(store, str(a), EntryEdit(content="likes coffee", tags=("drink", "morning")))
    update = _outbox(pg_dsn)
    assert [(e["event_type"], e["target"]) for e in update] == [
        ("upsert_memory_vector", "milvus"),
        ("upsert_memory_graph_node", "neo4j"),
    ]
    assert {e["aggregate_id"] for e in update} == {a}
    assert {e["aggregate_version"] for e in update} == {2}
    payload = update[0]["payload"]
    assert payload["memory_id"] == a and payload["content"] == "likes coffee"
    assert payload["version"] == 2 and payload["user_id"] == "u1"
    assert {"importance", "tags", "content_hash", "updated_at", "embedding"} <= payload.keys()
    assert all(e["status"] == "pending" for e in update)
    assert len({e["event_id"] for e in update}) == 2

    # a tombstone: delete the vector, the graph edges and the node
    svc.entries.edit(store, str(c), EntryEdit(status=Status.DELETED))
    dead = _outbox(pg_dsn)[2:]
    assert [(e["event_type"], e["target"], e["aggregate_id"]) for e in dead] == [
        ("delete_memory_vector", "milvus", c),
        ("delete_memory_graph_edges", "neo4j", c),
        ("delete_memory_graph_node", "neo4j", c),
    ]
    assert rows(pg_dsn)[c]["deleted_at"] is not None

    # an insert (a merge): the new row's vector, node and its edges to what it replaced
    tx = svc.merges.merge(store, [str(a), str(b)], content="likes coffee a lot")
    merged = int(next(ch.id for ch in tx.changes if ch.before is None))
    assert tx.details["merged"] == str(merged)  # the row id the table's sequence gave
    events = _outbox(pg_dsn)[5:]
    inserted = [(e["event_type"], e["target"]) for e in events if e["aggregate_id"] == merged]
    assert inserted == [
        ("upsert_memory_vector", "milvus"),
        ("upsert_memory_graph_node", "neo4j"),
        ("upsert_memory_graph_edges", "neo4j"),
    ]
    assert {e["aggregate_version"] for e in events if e["aggregate_id"] == merged} == {1}
    table = rows(pg_dsn)
    assert sorted(table[merged]["supersedes"]) == sorted([a, b])
    assert table[a]["deleted_at"] is not None and table[a]["superseded"] is True

    # every row memtui wrote carries the hash the Go system computes for it
    for ident, row in table.items():
        assert row["content_hash"] == content_hash({**row, "memory_id": ident}), ident


def _memtui(*args: str) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it (its own process: what it prints on stderr)."""
    return subprocess.run(
        [sys.executable, "-m", "memtui", *args], capture_output=True, text=True, check=False
    )


def test_memtui_tables_are_created_on_first_write_with_a_notice(pg_dsn: str) -> None:  # noqa: F811
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        ident = insert(conn, "x")
        columns_before = conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'long_term_memory' ORDER BY ordinal_position"
        ).fetchall()
    assert _memtui("list", pg_dsn).returncode == 0
    first = _memtui("edit", pg_dsn, str(ident), "--status", "archived")
    assert first.returncode == 0, first.stderr
    assert "memtui created its tables" in first.stderr
    second = _memtui("edit", pg_dsn, str(ident), "--importance", "0.1")
    assert second.returncode == 0 and "memtui created" not in second.stderr
    with psycopg.connect(pg_dsn) as conn:
        columns_after = conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'long_term_memory' ORDER BY ordinal_position"
        ).fetchall()
        side = conn.execute("SELECT memory_id, status FROM memtui_entry").fetchall()
    assert columns_after == columns_before
    assert side == [(ident, "archived")]
    # archived is memtui's own status: the Go row is untouched by it, memtui reads it back
    assert rows(pg_dsn)[ident]["version"] == 2  # the importance edit only
    assert Service().stores.open(pg_dsn).get(str(ident)).status is Status.ARCHIVED


def test_bad_locations_are_one_line(cli: Callable[..., CliResult]) -> None:
    result = cli("list", "postgresql://a@127.0.0.1:1/db#tabel=x")
    assert result.code == 1 and "unknown option 'tabel'" in result.err
    with pytest.raises(MemtuiError, match="not a table name"):
        Service().stores.open("postgresql://a@127.0.0.1:1/db#table=x;drop")


def test_backup_copies_the_whole_table_to_a_file_memtui_opens(
    pg_dsn: str,  # noqa: F811
    cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    _seed(pg_dsn)
    dest = tmp_path / "copy.jsonl"
    done = cli("backup", pg_dsn + "#user=u2", dest)  # one user open, the whole table copied
    assert done.code == 0, done.err
    assert "copied 5 rows" in done.out
    lines = [json.loads(line) for line in dest.read_text().splitlines()]
    table = rows(pg_dsn)
    assert [r["memory_id"] for r in lines] == sorted(table)
    for record in lines:
        assert record["content_hash"] == table[record["memory_id"]]["content_hash"]
        assert content_hash(record) == record["content_hash"]
    copy = Service().stores.open(dest)
    live = Service().stores.open(pg_dsn)
    assert copy.format_name == "longterm"
    assert {m.id: (m.content, m.status) for m in copy.memories()} == {
        m.id: (m.content, m.status) for m in live.memories()
    }
    again = cli("backup", pg_dsn, dest)
    assert again.code == 1 and "exists" in again.err


async def test_the_ui_opens_a_database_url_and_never_shows_its_password(
    pg_server: PgServer,  # noqa: F811
) -> None:
    from memtui.tui import make_app
    from memtui.tui.widgets.memory_table import MemoryTable

    secret = "hunter2-pw"
    dsn = pg_server.create_database().replace("postgres@", f"postgres:{secret}@")
    ids = _seed(dsn)
    app = make_app(dsn, watch_interval=0)
    async with app.run_test(size=(140, 40)) as pilot:
        for _ in range(500):  # until the store has loaded (bounded: a busy machine is slow)
            await pilot.pause(0.02)
            await app.workers.wait_for_complete()
            if app.store is not None and app.model.view:
                break
        await pilot.pause()
        table = app.screen.query_one(MemoryTable)
        shown = {table.model.memory_at(r).id for r in range(len(table.model.view))}  # type: ignore[union-attr]
        assert str(ids["coffee"]) in shown
        screen_text = app.export_screenshot()
        assert secret not in screen_text and secret not in app.sub_title
        assert "postgresql://postgres@127.0.0.1" in app.sub_title
