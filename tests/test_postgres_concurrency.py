"""memtui next to the running agent: a second connection plays the Go agent (inserting, updating,
tombstoning rows while memtui plans and applies). memtui refuses or re-bases, never overwrites;
nothing of either writer is lost; a kill -9 mid-apply leaves the table before or after, and the
ledger agrees."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from memtui.errors import ConflictError
from memtui.model import Status
from memtui.service import EntryEdit, Service
from tests.pg_agent import insert, restored_part, rows, tombstone, update
from tests.pg_server import pg_dsn, pg_server  # noqa: F401


def _seed(dsn: str) -> list[int]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return [
            insert(conn, "用户喜欢咖啡", importance=0.8),
            insert(conn, "用户喜欢咖啡", importance=0.6),
            insert(conn, "the user lives in Berlin", importance=0.7),
            insert(conn, "the user lives in Berlin", importance=0.5),
            insert(conn, "untouched", importance=0.5),
        ]


def _ledger(dsn: str) -> list[int]:
    with psycopg.connect(dsn) as conn:
        if conn.execute("SELECT to_regclass('memtui_ledger')").fetchone() == (None,):
            return []
        return [r[0] for r in conn.execute("SELECT tx_id FROM memtui_ledger ORDER BY tx_id")]


def _outbox_count(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        found = conn.execute("SELECT count(*) FROM memory_outbox").fetchone()
    return int(found[0]) if found else 0


def test_a_row_the_agent_changed_is_never_overwritten(pg_dsn: str) -> None:  # noqa: F811
    ids = _seed(pg_dsn)
    svc = Service()
    store = svc.stores.open(pg_dsn)
    with psycopg.connect(pg_dsn, autocommit=True) as agent:
        update(agent, ids[0], content="用户喜欢茶")
    outbox = _outbox_count(pg_dsn)
    assert store.changed_on_disk()
    with pytest.raises(ConflictError, match=rf"changed since memtui read it.*\({ids[0]}\)"):
        svc.entries.edit(store, str(ids[0]), EntryEdit(importance=0.1))
    table = rows(pg_dsn)
    assert table[ids[0]]["content"] == "用户喜欢茶" and table[ids[0]]["importance"] == 0.8
    assert _ledger(pg_dsn) == [] and _outbox_count(pg_dsn) == outbox
    # after a reload the same edit goes through, on top of the agent's change
    store.reload()
    svc.entries.edit(store, str(ids[0]), EntryEdit(importance=0.1))
    row = rows(pg_dsn)[ids[0]]
    assert (row["content"], row["importance"], row["version"]) == ("用户喜欢茶", 0.1, 3)
    assert not store.changed_on_disk()


def test_the_agent_writing_elsewhere_while_a_plan_applies_loses_nothing(
    pg_dsn: str,  # noqa: F811
) -> None:
    ids = _seed(pg_dsn)
    svc = Service()
    store = svc.stores.open(pg_dsn)
    plan = svc.plans.plan(store, svc.profiles.profile(store))
    assert plan.actions
    with psycopg.connect(pg_dsn, autocommit=True) as agent:
        new = insert(agent, "a fresh memory from the agent")
        update(agent, ids[4], content="changed by the agent", importance=0.9)
        # a version bump with nothing memtui shows changed: memtui re-bases on it
        touched = next(int(t) for a in plan.actions for t in a.targets)
        update(agent, touched)
    tx = svc.plans.apply(store, plan)
    table = rows(pg_dsn)
    assert table[new]["content"] == "a fresh memory from the agent"
    assert (table[ids[4]]["content"], table[ids[4]]["importance"]) == ("changed by the agent", 0.9)
    assert table[touched]["version"] == 3  # 1, the agent's bump, memtui's write
    assert str(touched) in tx.memory_ids
    # memtui's own view: its own write is not "an outside change"; the agent's are
    assert store.changed_on_disk()
    store.reload()
    assert store.get(str(new)).content == "a fresh memory from the agent"


def test_a_plan_over_a_row_the_agent_tombstoned_is_refused(pg_dsn: str) -> None:  # noqa: F811
    _seed(pg_dsn)
    svc = Service()
    store = svc.stores.open(pg_dsn)
    plan = svc.plans.plan(store, svc.profiles.profile(store))
    target = int(plan.actions[0].targets[0])
    with psycopg.connect(pg_dsn, autocommit=True) as agent:
        tombstone(agent, target)
    before = rows(pg_dsn)
    with pytest.raises(ConflictError, match=str(target)):
        svc.plans.apply(store, plan)
    assert rows(pg_dsn) == before
    store.reload()
    assert store.get(str(target)).status is Status.DELETED


def _wait_for(check: Callable[[], bool], what: str) -> None:
    """Until `check()` holds; the deadline only turns a hang into a failure."""
    deadline = time.monotonic() + 120
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


def _memtui_waits_on(dsn: str, statement: str) -> Callable[[], bool]:
    def check() -> bool:
        with psycopg.connect(dsn) as conn:
            found = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'memtui' "
                "AND wait_event_type = 'Lock' AND query ILIKE %s",
                [statement + "%"],
            ).fetchone()
        return bool(found and found[0])

    return check


def test_an_agent_write_racing_the_commit_makes_memtui_refuse(pg_dsn: str) -> None:  # noqa: F811
    ids = _seed(pg_dsn)
    svc = Service()
    store = svc.stores.open(pg_dsn)
    result: dict[str, Any] = {}
    with psycopg.connect(pg_dsn) as agent:
        # the agent's own transaction holds the row when memtui comes to lock it
        update(agent, ids[2], content="the user moved to Hamburg")

        def edit() -> None:
            try:
                result["tx"] = svc.entries.edit(store, str(ids[2]), EntryEdit(importance=0.2))
            except ConflictError as e:
                result["error"] = str(e)

        worker = threading.Thread(target=edit)
        worker.start()
        _wait_for(_memtui_waits_on(pg_dsn, "SELECT"), "memtui to wait for the agent's row lock")
        agent.commit()
        worker.join()
    assert "tx" not in result and str(ids[2]) in result["error"]
    row = rows(pg_dsn)[ids[2]]
    assert (row["content"], row["importance"], row["version"]) == (
        "the user moved to Hamburg",
        0.7,
        2,
    )


_CHILD = """
import sys
from memtui.service import Service
svc = Service()
store = svc.stores.open(sys.argv[1])
plan = svc.plans.plan(store, svc.profiles.profile(store))
print("applying", len(plan.actions), flush=True)
svc.plans.apply(store, plan)
print("committed", flush=True)
sys.stdin.read()
"""


def _child(dsn: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, dsn],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _no_memtui_backend(dsn: str) -> Callable[[], bool]:
    def check() -> bool:
        with psycopg.connect(dsn) as conn:
            found = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'memtui'"
            ).fetchone()
        return found == (0,)

    return check


@pytest.mark.slow
def test_kill_9_mid_apply_leaves_the_table_as_before(pg_dsn: str) -> None:  # noqa: F811
    _seed(pg_dsn)
    start = rows(pg_dsn)
    with psycopg.connect(pg_dsn) as blocker:
        # the outbox is written after the rows: holding it stops memtui mid-transaction
        blocker.execute("LOCK TABLE memory_outbox IN ACCESS EXCLUSIVE MODE")
        child = _child(pg_dsn)
        assert child.stdout is not None
        assert child.stdout.readline().startswith("applying")
        _wait_for(_memtui_waits_on(pg_dsn, "COPY"), "memtui to be mid-apply")
        child.send_signal(signal.SIGKILL)
        child.wait()
        blocker.rollback()
    _wait_for(_no_memtui_backend(pg_dsn), "the server to drop the dead client's transaction")
    assert rows(pg_dsn) == start
    assert _ledger(pg_dsn) == [] and _outbox_count(pg_dsn) == 0
    store = Service().stores.open(pg_dsn)
    assert store.transactions() == [] and store.backups() == []


@pytest.mark.slow
def test_kill_9_after_the_commit_leaves_the_table_after_and_the_ledger_agrees(
    pg_dsn: str,  # noqa: F811
) -> None:
    _seed(pg_dsn)
    start = rows(pg_dsn)
    child = _child(pg_dsn)
    assert child.stdout is not None
    assert child.stdout.readline().startswith("applying")
    assert child.stdout.readline() == "committed\n"
    child.send_signal(signal.SIGKILL)
    child.wait()
    end = rows(pg_dsn)
    store = Service().stores.open(pg_dsn)
    [tx] = store.transactions()
    assert tx.kind == "plan"
    # the ledger's images are the rows as they are now, and as they were before
    for change in tx.changes:
        ident = int(change.id)
        assert change.after_raw == end[ident]
        if change.before_raw is not None:
            assert change.before_raw == start[ident]
    assert restored_part({i: end[i] for i in start}) != restored_part(start)


def test_the_poll_notices_an_agent_write_within_ten_polls_and_nothing_else(
    pg_dsn: str,  # noqa: F811
) -> None:
    ids = _seed(pg_dsn)
    store = Service().stores.open(pg_dsn)
    assert not any(store.changed_on_disk() for _ in range(12))  # cheap polls and exact ones
    with psycopg.connect(pg_dsn, autocommit=True) as agent:  # still connected while polled
        update(agent, ids[1], importance=0.2)
        seen = [store.changed_on_disk() for _ in range(10)]
        assert seen[-1] and seen == sorted(seen)  # once noticed, it stays noticed
    store.reload()
    assert not store.changed_on_disk()
