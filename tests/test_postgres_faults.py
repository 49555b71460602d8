"""PostgreSQL faults told truthfully: the connection lost at COMMIT (a loopback proxy cuts it
before the server gets the COMMIT, or after it committed, mid-reply or before the reply ends);
memtui reconnects and reads its own ledger to say whether the change was made."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from memtui.errors import MemtuiError
from memtui.service import EntryEdit, Service
from memtui.stores.transfer import create_native_store
from tests.conftest import CliResult
from tests.pg_agent import insert, restored_part, rows
from tests.pg_proxy import commit_cutter
from tests.pg_server import PgServer, pg_dsn, pg_server  # noqa: F401


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def memtui(cli: Callable[..., CliResult], caplog: pytest.LogCaptureFixture) -> Callable[..., Ran]:
    """A command run in this process; its stderr as the user's terminal shows it: memtui's
    warnings (logging writes them there), then what the command printed."""

    def run(*args: str | Path) -> Ran:
        caplog.clear()
        result = cli(*args)
        said = "".join(
            f"{r.getMessage()}\n" for r in caplog.records if r.levelno >= logging.WARNING
        )
        return Ran(result.code, result.out, said + result.err)

    return run


def _seed(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for content, importance in [
            ("用户喜欢咖啡", 0.8),
            ("用户喜欢咖啡", 0.6),
            ("the user lives in Berlin", 0.7),
            ("the user lives in Berlin", 0.5),
            ("untouched", 0.5),
        ]:
            insert(conn, content, importance=importance)


def _ledger(dsn: str) -> list[int]:
    with psycopg.connect(dsn) as conn:
        if conn.execute("SELECT to_regclass('memtui_ledger')").fetchone() == (None,):
            return []
        return [r[0] for r in conn.execute("SELECT tx_id FROM memtui_ledger ORDER BY tx_id")]


@pytest.mark.parametrize("mode", ["mid-reply", "after-reply"])
def test_a_commit_whose_answer_was_lost_is_reported_made(
    pg_server: PgServer,  # noqa: F811
    memtui: Callable[..., Ran],
    tmp_path: Path,
    mode: str,
) -> None:
    server_dsn = pg_server.create_database()
    _seed(server_dsn)
    before = rows(server_dsn)
    plan = tmp_path / "plan.json"
    with commit_cutter(pg_server.port) as proxy:
        dsn = proxy.dsn(server_dsn)
        assert memtui("plan", dsn, "--out", plan).returncode == 0
        proxy.cut_next(mode)
        applied = memtui("apply", dsn, plan, "--yes")
        assert proxy.cuts == 1
        assert applied.returncode == 0, applied.stderr
        assert "in transaction 1" in applied.stdout
        assert "found transaction 1 in its ledger: the change was made" in applied.stderr
        assert "not made" not in applied.stderr and "Traceback" not in applied.stderr
        assert "memtui created its tables" in applied.stderr  # that transaction did commit
        assert _ledger(server_dsn) == [1] and rows(server_dsn) != before
        # a retry is refused for what it is: the plan's entries have changed
        again = memtui("apply", dsn, plan, "--yes")
        assert again.returncode == 1 and _ledger(server_dsn) == [1]

        proxy.cut_next(mode)
        undone = memtui("undo", dsn)
        assert proxy.cuts == 1
    assert undone.returncode == 0, undone.stderr
    assert "undid transaction 1 as transaction 2" in undone.stdout
    assert "found transaction 2 in its ledger: the change was made" in undone.stderr
    assert _ledger(server_dsn) == [1, 2]
    assert restored_part(rows(server_dsn)) == restored_part(before)


def test_a_commit_the_server_never_got_is_reported_not_made_and_the_retry_works(
    pg_server: PgServer,  # noqa: F811
    memtui: Callable[..., Ran],
    tmp_path: Path,
) -> None:
    server_dsn = pg_server.create_database()
    _seed(server_dsn)
    before = rows(server_dsn)
    plan = tmp_path / "plan.json"
    with commit_cutter(pg_server.port) as proxy:
        dsn = proxy.dsn(server_dsn)
        assert memtui("plan", dsn, "--out", plan).returncode == 0
        proxy.cut_next("before")
        failed = memtui("apply", dsn, plan, "--yes")
        assert proxy.cuts == 1
        assert failed.returncode == 1
        assert failed.stderr.count("\n") == 1, failed.stderr
        assert "the change was not made" in failed.stderr
        assert "transaction 1 is not in its ledger" in failed.stderr
        assert "memtui created its tables" not in failed.stderr  # rolled back with the rest
        assert _ledger(server_dsn) == [] and rows(server_dsn) == before
        retry = memtui("apply", dsn, plan, "--yes")  # the proxy cuts once
        assert retry.returncode == 0, retry.stderr
        assert "in transaction 1" in retry.stdout and _ledger(server_dsn) == [1]
        assert "memtui created its tables" in retry.stderr

        proxy.cut_next("before")
        failed = memtui("undo", dsn)
        assert failed.returncode == 1 and "the change was not made" in failed.stderr
        assert _ledger(server_dsn) == [1]
        undone = memtui("undo", dsn)
    assert undone.returncode == 0, undone.stderr
    assert restored_part(rows(server_dsn)) == restored_part(before)


def test_memory_text_inside_a_server_error_is_escaped_and_said_once(
    pg_dsn: str,  # noqa: F811
    memtui: Callable[..., Ran],
) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        ident = insert(conn, "short")
        conn.execute("ALTER TABLE long_term_memory ALTER COLUMN content TYPE VARCHAR(20)")
    before = rows(pg_dsn)
    text = "\x1b[31mred, and far too long for the column\x1b[0m"
    failed = memtui("edit", pg_dsn, str(ident), "--content", text)
    assert failed.returncode == 1
    assert "the change was not made: value too long" in failed.stderr
    assert "\x1b" not in failed.stderr and "\\x1b[31mred" in failed.stderr  # the COPY's CONTEXT
    assert failed.stderr.count("\n") == 1  # not psycopg's "error ignored terminating <Copy>"
    assert rows(pg_dsn) == before


def test_the_service_says_a_table_changed_in_the_database_and_an_outage_is_no_change(
    pg_server: PgServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    server_dsn = pg_server.create_database()
    _seed(server_dsn)
    svc = Service()
    with commit_cutter(pg_server.port) as proxy:
        store = svc.stores.open(proxy.dsn(server_dsn))
        assert svc.stores.change_place(store) == "in the database"
        assert not store.changed_on_disk()
    store.close()  # the proxy is gone: the server is out of reach
    assert not store.changed_on_disk()
    path = tmp_path / "native.json"
    create_native_store(path, [], now=svc.now(), kind="import", reason="test")
    assert svc.stores.change_place(svc.stores.open(path)) == "on disk"


def test_a_connection_lost_while_rows_are_sent_is_one_line_and_nothing_changes(
    pg_server: PgServer,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    server_dsn = pg_server.create_database()
    _seed(server_dsn)
    before = rows(server_dsn)
    svc = Service()
    with commit_cutter(pg_server.port) as proxy:
        store = svc.stores.open(proxy.dsn(server_dsn))
        proxy.cut_next("copy")
        with pytest.raises(MemtuiError) as failed:  # megabytes: the COPY is cut mid-stream
            svc.entries.edit(store, "1", EntryEdit(content="a long memory " * 400_000))
        assert proxy.cuts == 1
    assert "the change was not made" in str(failed.value) and "\n" not in str(failed.value)
    assert "error ignored terminating" not in caplog.text  # psycopg's note on the COPY it left
    assert rows(server_dsn) == before and _ledger(server_dsn) == []
