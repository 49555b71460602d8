"""Progress of apply, undo and rollback: every format's commit tells each stage with counts
that only grow, from 0 to the stage's total, at most about once per 1 % of it; and watching a
commit changes nothing in what it writes."""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import psycopg
import pytest

from memtui.demo import make_demo_memories
from memtui.service import Service
from memtui.stores import Change, create_native_store, export_store, open_store
from memtui.stores.ledger import Transaction
from memtui.stores.protocol import MemoryStore
from tests.conftest import NOW, CliResult
from tests.pg_agent import insert
from tests.pg_server import PgServer, pg_dsn, pg_server  # noqa: F401

SIZE = 3000
STAGES = {"checking", "preparing", "backup", "ledger", "writing"}


class Reports:
    """What a progress callback was told, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.calls.append((stage, done, total))

    def runs(self) -> list[tuple[str, list[int], int]]:
        """Each stage as reported: its name, its counts in order, its total."""
        runs: list[tuple[str, list[int], int]] = []
        for stage, done, total in self.calls:
            if runs and runs[-1][0] == stage and done > 0:
                runs[-1][1].append(done)
            else:
                runs.append((stage, [done], total))
        return runs

    def assert_well_formed(self, touched: int) -> None:
        runs = self.runs()
        assert {name for name, _, _ in runs} == STAGES
        assert len(runs) == len(STAGES), runs  # each stage once, not interleaved
        for name, counts, total in runs:
            assert counts[0] == 0 and counts[-1] == total, (name, counts, total)
            assert all(a < b for a, b in pairwise(counts)), (name, counts)
            assert len(counts) <= 102, (name, len(counts))  # ~1 % steps, not per entry
        totals = {name: total for name, _, total in runs}
        assert totals["checking"] == totals["preparing"] == touched


@pytest.fixture(scope="module")
def native_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("progress") / "native.json"
    create_native_store(
        path, make_demo_memories(SIZE, 3, NOW), now=NOW, kind="import", reason="test"
    )
    return path


def store_copy(source: Path, fmt: str, folder: Path, name: str) -> Path:
    dest = folder / (name + (".json" if fmt == "native" else ".jsonl"))
    if fmt == "native":
        shutil.copyfile(source, dest)
    else:
        export_store(open_store(str(source)), dest, fmt, NOW)
    return dest


def service() -> Service:
    return Service(clock=lambda: NOW)


def plan_and_apply(path: Path, progress: Reports | None) -> tuple[MemoryStore, Transaction, int]:
    svc = service()
    store = svc.stores.open(path)
    plan = svc.plans.plan(store, svc.profiles.profile(store))
    approved = plan.default_approved()
    tx = svc.plans.apply(store, plan, approved, progress)
    return store, tx, len(tx.changes)


@pytest.mark.parametrize("fmt", ["native", "pi", "longterm-jsonl"])
def test_apply_undo_and_rollback_report_every_stage_from_zero_to_total(
    fmt: str, native_source: Path, tmp_path: Path
) -> None:
    path = store_copy(native_source, fmt, tmp_path, "store")
    applying = Reports()
    store, tx, touched = plan_and_apply(path, applying)
    assert touched > 1000  # enough entries that 1 % steps mean something
    applying.assert_well_formed(touched)

    undoing = Reports()
    undo = service().history.undo(store, tx.id, undoing)
    undoing.assert_well_formed(len(undo.changes))

    rolling = Reports()  # back to the applied plan: the file the undo replaced
    back = service().history.rollback(store, undo.backup or "", rolling)
    rolling.assert_well_formed(len(back.changes))


@pytest.mark.parametrize("fmt", ["native", "pi", "longterm-jsonl"])
def test_a_watched_apply_writes_exactly_what_an_unwatched_one_does(
    fmt: str, native_source: Path, tmp_path: Path
) -> None:
    plain = store_copy(native_source, fmt, tmp_path, "plain")
    watched = store_copy(native_source, fmt, tmp_path, "watched")
    _, tx_plain, _ = plan_and_apply(plain, None)
    reports = Reports()
    _, tx_watched, _ = plan_and_apply(watched, reports)
    assert reports.calls  # it was watched
    assert watched.read_bytes() == plain.read_bytes()
    assert tx_watched.to_dict() == tx_plain.to_dict()


def _seed_rows(dsn: str, count: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for n in range(count):
            insert(conn, f"the user noted fact number {n}", importance=0.5)


def _halve_importance(store: MemoryStore) -> list[Change]:
    return [Change(m, m.with_(importance=m.importance / 2)) for m in store.memories()]


def test_postgres_commit_undo_and_rollback_report_every_stage(
    pg_dsn: str,  # noqa: F811
) -> None:
    _seed_rows(pg_dsn, 300)
    svc = service()
    store = svc.stores.open(pg_dsn)
    changes = _halve_importance(store)
    committing = Reports()
    tx = store.commit(
        changes, actor="user", kind="edit", reason="test", now=NOW, progress=committing
    )
    committing.assert_well_formed(300)
    undoing = Reports()
    svc.history.undo(store, tx.id, undoing)
    undoing.assert_well_formed(300)
    rolling = Reports()
    back = svc.history.rollback(store, tx.backup or "", rolling)
    rolling.assert_well_formed(len(back.changes))


def test_postgres_commit_results_are_the_same_watched_or_not(
    pg_server: PgServer,  # noqa: F811
) -> None:
    results = []
    for watch in (None, Reports()):
        dsn = pg_server.create_database()
        _seed_rows(dsn, 120)
        store = service().stores.open(dsn)
        tx = store.commit(
            _halve_importance(store),
            actor="user",
            kind="edit",
            reason="t",
            now=NOW,
            progress=watch,
        )
        # the rows were inserted at different moments: compare what the commit decided
        table = {m.id: (m.content, m.importance, m.version, m.status) for m in store.memories()}
        images = [(c.id, c.after_raw["importance"], c.after_raw["version"]) for c in tx.changes]
        results.append((table, images))
    assert results[0] == results[1]


def _run_apply(store: Path, plan: Path, stderr_tty: bool) -> tuple[int, str, bytes]:
    """`memtui apply --yes` in a child process; its stderr a terminal (a pty) or a pipe."""
    return _run_memtui(["apply", str(store), str(plan), "--yes"], stderr_tty)


def _run_memtui(args: list[str], stderr_tty: bool) -> tuple[int, str, bytes]:
    """`memtui ARGS` in a child process; its stderr a terminal (a pty) or a pipe."""
    command = [sys.executable, "-m", "memtui", *args]
    if not stderr_tty:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        return done.returncode, done.stdout, done.stderr.encode()
    main, child = pty.openpty()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=child, text=True) as proc:
        os.close(child)
        err = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            err += chunk
        out = proc.stdout.read() if proc.stdout else ""
    os.close(main)
    return proc.returncode, out, err


def test_cli_apply_shows_one_progress_line_only_on_a_terminal(
    native_source: Path, tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    plain = store_copy(native_source, "native", tmp_path, "plain")
    watched = store_copy(native_source, "native", tmp_path, "watched")
    plans = tmp_path / "plain.plan.json", tmp_path / "watched.plan.json"
    assert cli("plan", plain, "--out", plans[0]).code == 0
    assert cli("plan", watched, "--out", plans[1]).code == 0
    code, out, err = _run_apply(plain, plans[0], stderr_tty=False)
    assert code == 0 and "applied" in out and err == b""  # as before: nothing on a pipe
    code_tty, out_tty, err_tty = _run_apply(watched, plans[1], stderr_tty=True)
    assert code_tty == 0, err_tty
    assert out_tty == out.replace(str(plain), str(watched))
    text = err_tty.decode()
    assert re.search(r"\rchecking 0/[\d,]{5}\r", text.replace("\x1b[K", ""))  # counts shown
    assert "preparing" in text and "writing" in text
    assert text.endswith("\r\x1b[K")  # the line is cleared at the end
    assert "\n" not in text  # one line, rewritten in place
    assert watched.read_bytes() == plain.read_bytes()


def test_cli_plan_shows_its_progress_only_on_a_terminal(tmp_path: Path) -> None:
    memories = [m.with_(user_id=f"u{n % 4}") for n, m in enumerate(make_demo_memories(400, 5, NOW))]
    store = tmp_path / "store.json"
    create_native_store(store, memories, now=NOW, kind="demo", reason="test")
    args = ["plan", str(store), "--profile", "longterm", "--now", "2026-12-01T00:00:00Z"]
    code, out, err = _run_memtui([*args, "--out", str(tmp_path / "a.json")], stderr_tty=False)
    assert code == 0 and "plan written to" in out and err == b""  # nothing on a pipe
    code_tty, out_tty, err_tty = _run_memtui([*args, "--out", str(tmp_path / "b.json")], True)
    assert code_tty == 0, err_tty
    assert out_tty == out.replace("a.json", "b.json")
    text = err_tty.decode()
    assert "planning: " in text and "%)" in text
    assert text.endswith("\r\x1b[K") and "\n" not in text  # one line, cleared at the end
