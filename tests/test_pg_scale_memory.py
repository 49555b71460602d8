"""A PostgreSQL plan made user by user stays within a memory bound the whole loaded table does
not fit (#24 item 5): a generated table of 60k rows and 150 users is planned and its plan file
written, in a process whose data segment may grow only `BUDGET_MB` past what it holds once
memtui, psycopg and the planner are imported (`resource.setrlimit`), before the table is
opened. User by user (`memtui plan URL --out`) it fits; loading every row (what `memtui plan`
did before, and the TUI's "all users") does not."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from tests.conftest import NOW
from tests.pg_scale_rows import fill
from tests.pg_server import PgServer, pg_server  # noqa: F401

resource = pytest.importorskip("resource")
pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="reads the data segment from /proc"
)

ROWS, USERS = 60_000, 150
BUDGET_MB = 30
"""Past the imports: user by user needs under 20 MB here, the whole table 45-55 (measured with
budgets from 20 to 55 MB in steps of 5; before the plan was written user by user, 30-40 and
70-90)."""

_PLAN = """
import resource, sys
import psycopg
import memtui.engine.planner, memtui.service.pg_plan, memtui.service.plans
from memtui.service import Service, parse_time

def data_segment():
    for line in open("/proc/self/status"):
        if line.startswith("VmData:"):
            return int(line.split()[1]) << 10

dsn, how, budget, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
svc = Service()
now = parse_time("2026-11-30T12:00:00Z", "--now")
limit = data_segment() + (budget << 20)
resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
store = svc.stores.open(dsn, by_user=how == "by-user")
profile = svc.profiles.profile(store, "longterm")
svc.plans.write_stream(svc.plans.plan_stream(store, profile, now=now), out)
print("written")
"""


@pytest.fixture(scope="module")
def big_table(pg_server: PgServer) -> str:  # noqa: F811
    dsn = pg_server.create_database()
    fill(dsn, ROWS, USERS, NOW - timedelta(days=2), seed=1, days=3)
    return dsn


def _plan(dsn: str, how: str, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _PLAN, dsn, how, str(BUDGET_MB), str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONFAULTHANDLER": ""},
        check=False,
    )


def test_a_plan_made_user_by_user_fits_the_bound(big_table: str, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    done = _plan(big_table, "by-user", out)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "written"
    text = out.read_bytes()
    assert text.startswith(b'{"format":"memtui-plan","version":2') and b'"summary":{' in text


def test_the_whole_table_does_not_fit_that_bound(big_table: str, tmp_path: Path) -> None:
    done = _plan(big_table, "whole", tmp_path / "plan.json")
    assert done.returncode != 0
    assert "MemoryError" in done.stderr or "out of memory" in done.stderr, done.stderr[-2000:]
    assert not (tmp_path / "plan.json").exists()
