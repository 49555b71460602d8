"""Curating the Go table: edit, merge, supersede, plan and apply, then undo and rollback restore
every row's content, importance, tags, lineage fields and tombstones exactly; versions only
move forward."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from memtui.model import Status
from memtui.service import EntryEdit, Service
from tests.conftest import CliResult
from tests.pg_agent import insert, restored_part, rows, tombstone
from tests.pg_server import PgServer, pg_dsn, pg_server  # noqa: F401


def _seed(dsn: str) -> dict[str, int]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        ids = {
            "a": insert(
                conn, "用户喜欢咖啡", importance=0.8, tags=["drink"], category="preference"
            ),
            "b": insert(
                conn, "用户喜欢咖啡", importance=0.6, tags=["src:user"], category="preference"
            ),
            "c": insert(conn, "用户每天早上喝一杯美式", importance=0.5, embedding=[0.1, 0.2]),
            "d": insert(conn, "the user lives in Berlin", importance=0.7, user_id="u2"),
            "e": insert(conn, "the user lives in Munich", importance=0.4, user_id="u2"),
            "gone": insert(conn, "deleted by the agent", importance=0.2),
        }
        tombstone(conn, ids["gone"])
    return ids


def _versions(table: dict[int, dict[str, Any]]) -> dict[int, int]:
    return {i: r["version"] for i, r in table.items()}


def test_undo_of_every_change_restores_the_rows_exactly(pg_dsn: str) -> None:  # noqa: F811
    ids = _seed(pg_dsn)
    start = rows(pg_dsn)
    svc = Service()
    store = svc.stores.open(pg_dsn)
    a, b, c, d, e = (str(ids[k]) for k in "abcde")
    svc.entries.edit(
        store, c, EntryEdit(content="喝美式", importance=0.9, tags=("drink", "morning"))
    )
    svc.entries.edit(store, d, EntryEdit(status=Status.ARCHIVED))
    svc.merges.supersede(store, e, d)
    merge = svc.merges.merge(store, [a, b], content=None)
    svc.merges.restore(store, str(ids["gone"]))
    changed = rows(pg_dsn)
    merged = int(merge.details["merged"])
    assert changed[merged]["supersedes"] == sorted([ids["a"], ids["b"]])
    assert changed[ids["a"]]["deleted_at"] is not None
    assert changed[ids["e"]]["superseded"] is True
    assert changed[ids["gone"]]["deleted_at"] is None
    assert store.get(d).status is Status.ARCHIVED  # memtui's own status, kept beside the row
    assert store.get(e).superseded_by == d

    for _ in range(5):
        svc.history.undo(store)
    end = rows(pg_dsn)
    # the inserted merge row stays as a tombstone (the Go table never loses a row)
    assert end[merged]["deleted_at"] is not None
    del end[merged]
    assert restored_part(end) == restored_part(start)
    assert all(end[i]["version"] > start[i]["version"] for i in (ids["a"], ids["c"], ids["gone"]))
    assert all(end[i]["version"] >= start[i]["version"] for i in start)
    # what memtui shows agrees with a fresh read
    fresh = svc.stores.open(pg_dsn)
    assert {m.id: m.status for m in fresh.memories()} == {m.id: m.status for m in store.memories()}
    assert fresh.get(d).status is Status.ACTIVE and fresh.get(a).status is Status.ACTIVE
    assert fresh.get(str(ids["gone"])).status is Status.DELETED

    # undo is undoable: redo the merge
    redo = svc.history.undo(store, max(t.id for t in store.transactions() if t.undoes == merge.id))
    assert redo.undoes is not None
    again = rows(pg_dsn)
    assert again[merged]["deleted_at"] is None and again[ids["a"]]["deleted_at"] is not None


def test_plan_apply_and_undo_through_the_cli(
    pg_dsn: str,  # noqa: F811
    cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    ids = _seed(pg_dsn)
    start = rows(pg_dsn)
    plan = tmp_path / "plan.json"
    planned = cli("plan", pg_dsn, "--out", plan)
    assert planned.code == 0, planned.err
    assert "absorb 1" in planned.out  # the exact duplicate
    applied = cli("apply", pg_dsn, plan, "--yes")
    assert applied.code == 0, applied.err
    after = rows(pg_dsn)
    kept, absorbed = sorted((after[ids["a"]], after[ids["b"]]), key=lambda r: r["deleted_at"] or "")
    assert kept["deleted_at"] is None and absorbed["deleted_at"] is not None
    assert absorbed["superseded"] is True
    # applying the same plan again is refused: the rows it was made from changed
    again = cli("apply", pg_dsn, plan, "--yes")
    assert again.code == 1 and "changed since the plan was made" in again.err
    undone = cli("undo", pg_dsn)
    assert undone.code == 0, undone.err
    end = rows(pg_dsn)
    assert restored_part(end) == restored_part(start)
    assert all(end[i]["version"] >= start[i]["version"] for i in start)


def test_rollback_to_a_backup_undoes_everything_since(
    pg_dsn: str,  # noqa: F811
    cli: Callable[..., CliResult],
) -> None:
    ids = _seed(pg_dsn)
    start = rows(pg_dsn)
    svc = Service()
    store = svc.stores.open(pg_dsn)
    svc.entries.edit(store, str(ids["c"]), EntryEdit(content="first"))
    svc.entries.edit(store, str(ids["c"]), EntryEdit(content="second", tags=("x",)))
    svc.merges.merge(store, [str(ids["d"]), str(ids["e"])], content="lives in Berlin")
    backups = svc.history.backups(store)
    assert [b.tx_id for b in backups] == [3, 2, 1]
    listed = cli("backups", pg_dsn)
    assert listed.code == 0 and backups[-1].name in listed.out
    done = cli("rollback", pg_dsn, backups[-1].name)
    assert done.code == 0, done.err
    end = rows(pg_dsn)
    merged = max(end)
    assert end[merged]["deleted_at"] is not None
    del end[merged]
    assert restored_part(end) == restored_part(start)
    # the rollback is itself a transaction, undone like any other
    assert cli("undo", pg_dsn).code == 0
    assert rows(pg_dsn)[ids["c"]]["content"] == "second"


def test_rollback_from_a_copy_of_the_table_restores_it_in_one_undoable_transaction(
    pg_dsn: str,  # noqa: F811
    pg_server: PgServer,  # noqa: F811
    cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    ids = _seed(pg_dsn)
    svc = Service()
    store = svc.stores.open(pg_dsn)
    # a status only memtui's table holds
    svc.entries.set_status(store, str(ids["a"]), Status.ARCHIVED)
    copy = tmp_path / "copy.jsonl"
    assert cli("backup", pg_dsn, copy).code == 0
    start = rows(pg_dsn)
    svc.entries.set_status(store, str(ids["a"]), Status.ACTIVE)
    svc.entries.edit(store, str(ids["c"]), EntryEdit(content="changed", tags=("x",)))
    svc.merges.merge(store, [str(ids["d"]), str(ids["e"])], content="lives in Berlin")
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # the agent adds a row meanwhile
        added = insert(conn, "the agent learnt this after the copy")
    count = len(svc.stores.open(pg_dsn).history())

    done = cli("rollback", pg_dsn, "--from", copy)
    assert done.code == 0, done.err
    assert f"rolled back to {copy}" in done.out
    end = rows(pg_dsn)
    new_rows = set(end) - set(start)
    assert added in new_rows and len(new_rows) == 2  # the agent's row and the merged one
    for new in new_rows:  # tombstones now
        assert end[new]["deleted_at"] is not None
        del end[new]
    assert restored_part(end) == restored_part(start)
    assert all(end[i]["version"] >= start[i]["version"] for i in start)
    again = svc.stores.open(pg_dsn)
    assert again.get(str(ids["a"])).status is Status.ARCHIVED
    assert again.get(str(ids["c"])).content == "用户每天早上喝一杯美式"
    history = again.history()  # newest first
    assert len(history) == count + 1 and history[0].kind == "rollback"  # one transaction

    assert cli("undo", pg_dsn).code == 0  # undone like any other
    after_undo = svc.stores.open(pg_dsn)
    assert after_undo.get(str(ids["c"])).content == "changed"
    assert after_undo.get(str(added)).status is Status.ACTIVE


def test_rollback_refuses_a_file_that_is_not_a_copy_of_this_table(
    pg_dsn: str,  # noqa: F811
    pg_server: PgServer,  # noqa: F811
    cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    ids = _seed(pg_dsn)
    copy = tmp_path / "copy.jsonl"
    assert cli("backup", pg_dsn, copy).code == 0
    svc = Service()
    svc.entries.edit(svc.stores.open(pg_dsn), str(ids["c"]), EntryEdit(content="changed"))
    before = rows(pg_dsn)

    other = pg_server.create_database()  # another database with the same rows
    _seed(other)
    other_copy = tmp_path / "other.jsonl"
    assert cli("backup", other, other_copy).code == 0
    edited = tmp_path / "edited.jsonl"
    edited.write_text(copy.read_text().replace("用户喜欢咖啡", "用户不喜欢咖啡", 1))
    stranger = tmp_path / "stranger.json"
    stranger.write_text('{"memories": []}\n')
    for bad in (other_copy, edited, stranger):
        refused = cli("rollback", pg_dsn, "--from", bad)
        assert refused.code == 1 and len(refused.err.strip().splitlines()) == 1, refused.err
        assert "not a copy of long_term_memory" in refused.err
    missing = cli("rollback", pg_dsn, "--from", tmp_path / "nope.jsonl")
    assert missing.code == 1 and "cannot read it" in missing.err
    both = cli("rollback", pg_dsn, "1", "--from", copy)
    assert both.code == 2 and "one of them" in both.err
    assert rows(pg_dsn) == before  # nothing changed
    assert svc.stores.open(pg_dsn).get(str(ids["c"])).content == "changed"
