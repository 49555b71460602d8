"""Worker processes that plan users: one that dies (the kernel's out-of-memory killer, a
kill -9) ends the plan with one line saying so instead of a plan that waits for ever, and a
cancelled plan leaves no worker planning. Each case runs in a subprocess with a time limit,
so a hang fails the test rather than the suite."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memtui.service.parallel_plan import can_fork

pytestmark = pytest.mark.skipif(not can_fork(), reason="workers are forked")

_SCRIPT = """
import multiprocessing, os, signal, sys, time
from memtui.engine.planner import Cancelled
from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.service.parallel_plan import each_result

users = [[Memory(id=f"{u}-{i}", content="x", user_id=str(u)) for i in range(3)] for u in range(16)]
case = sys.argv[1]

def each(entries):
    if case == "die" and entries[0].user_id == "5":
        os.kill(os.getpid(), signal.SIGKILL)
    if case == "cancel" and int(entries[0].user_id) >= 4:
        time.sleep(300)  # a worker still busy when the plan is cancelled (past the limit)
    return entries[0].user_id

try:
    got = list(each_result(users, 2, each, None, lambda: case == "cancel"))
    print("done", len(got))
except (MemtuiError, Cancelled) as e:
    print(type(e).__name__, e)
print("workers left", len(multiprocessing.active_children()))
"""


def _run(case: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, case], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_every_user_comes_back_in_order() -> None:
    assert _run("all").splitlines() == ["done 16", "workers left 0"]


def test_a_worker_killed_ends_the_plan_with_one_line() -> None:
    said, left = _run("die").splitlines()
    assert said.startswith("MemtuiError a planning worker process ended before its users were")
    assert "killed by SIGKILL" in said and "nothing was written" in said
    assert left == "workers left 0"


def test_a_cancelled_plan_stops_its_workers() -> None:
    assert _run("cancel").splitlines() == ["Cancelled planning cancelled", "workers left 0"]
