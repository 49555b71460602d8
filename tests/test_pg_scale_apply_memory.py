"""Applying a PostgreSQL plan stays within a memory bound the whole loaded table does not fit
(#24 item 5): a generated table of 60k rows and 150 users is planned (user by user), then its
plan file is applied and undone, each in a process whose data segment may grow only
`BUDGET_MB` past what it holds once memtui and psycopg are imported (`resource.setrlimit`),
before the table is opened. Reading the rows the plan names (`memtui apply URL PLAN`) it fits,
and apply then undo leave every row with the columns it had; loading every row (`PgStore`,
what `memtui apply` did before) does not fit."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memtui.service import Service
from tests.conftest import NOW
from tests.pg_agent import restored_part, rows
from tests.pg_scale_rows import fill
from tests.pg_server import PgServer, pg_server  # noqa: F401

resource = pytest.importorskip("resource")
pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="reads the data segment from /proc"
)

ROWS, USERS = 60_000, 150
BUDGET_MB = {"rows": 40, "whole": 40, "undo": 60}
"""Past the imports. Applying, reading the rows the plan names needs 15-20 MB here, loading
the whole table 50-60; undo reads the ledger (the applied transaction's images, about 35 MB
here), not the table, and needs 30-40 (measured with budgets of 10 to 150 MB)."""

_RUN = """
import resource, sys
import psycopg
import memtui.planfile, memtui.service.plans, memtui.stores.postgres.table
from memtui.service import Service

def data_segment():
    for line in open("/proc/self/status"):
        if line.startswith("VmData:"):
            return int(line.split()[1]) << 10

dsn, how, budget, plan = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
TOUCHED = int(sys.argv[5])
svc = Service()
limit = data_segment() + (budget << 20)
resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
store = svc.stores.open(dsn, by_user=how != "whole")
if how == "undo":
    tx = svc.history.undo(store)
else:
    loaded = svc.plans.load_plan(plan, store)
    chosen, touched = [], 0  # a person approved its first actions, up to TOUCHED rows
    for action in loaded.actions:
        touched += len(action.targets)
        if touched > TOUCHED:
            break
        chosen.append(action.id)
    tx = svc.plans.apply(store, loaded, chosen)
print(f"transaction {tx.id}: {len(tx.changes)} rows")
"""


TOUCHED = 1000
"""The rows the approved actions touch (the first actions of the plan): what the commit
holds (its changes, before-images and ledger) grows with them, not with the table."""


def make_plan(pg_server: PgServer, folder: Path) -> tuple[str, Path]:  # noqa: F811
    dsn = pg_server.create_database()
    # rows up to a day old an hour after the table was made: no decay is due yet, so the
    # plan touches a few thousand rows of the 60k (absorbs, merges, conflicts)
    made = NOW - timedelta(days=2)
    fill(dsn, ROWS, USERS, made, seed=1, days=1)
    out = folder / "plan.json"
    svc = Service()
    store = svc.stores.open(dsn, by_user=True)
    profile = svc.profiles.profile(store, "longterm")
    now = made + timedelta(hours=1)
    svc.plans.write_stream(svc.plans.plan_stream(store, profile, now=now), str(out))
    return dsn, out


@pytest.fixture(scope="module")
def planned(pg_server: PgServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:  # noqa: F811
    return make_plan(pg_server, tmp_path_factory.mktemp("plan"))


def _run(dsn: str, how: str, plan: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _RUN, dsn, how, str(BUDGET_MB[how]), str(plan), str(TOUCHED)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONFAULTHANDLER": ""},
        check=False,
    )


def test_the_whole_table_does_not_fit_that_bound(planned: tuple[str, Path]) -> None:
    dsn, plan = planned
    before = rows(dsn)
    done = _run(dsn, "whole", plan)
    assert done.returncode != 0
    assert "MemoryError" in done.stderr or "out of memory" in done.stderr, done.stderr[-2000:]
    assert rows(dsn) == before


def test_apply_and_undo_reading_the_rows_named_fit_it(planned: tuple[str, Path]) -> None:
    dsn, plan = planned
    before = rows(dsn)
    applied = _run(dsn, "rows", plan)
    assert applied.returncode == 0, applied.stderr[-2000:]
    changed: dict[int, Any] = rows(dsn)
    touched = int(applied.stdout.split(": ")[1].split()[0])
    assert touched > 500 and sum(changed.get(i) != before[i] for i in before) > 500
    undone = _run(dsn, "undo", plan)
    assert undone.returncode == 0, undone.stderr[-2000:]
    back = rows(dsn)
    made = set(back) - set(before)  # a merge's new row: a tombstone once undone
    assert all(back[i]["deleted_at"] is not None for i in made)
    # versions move on and updated_at is the undo's: every other column is what it was
    assert restored_part({i: back[i] for i in before}) == restored_part(before)
