"""Worker processes that plan users: one that dies (the kernel's out-of-memory killer, a
kill -9) ends the plan with one line saying so instead of a plan that waits for ever, and a
cancelled plan leaves no worker planning. Each case runs in a subprocess with a time limit,
so a hang fails the test rather than the suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


_WRITE_FAILS = """
import errno, gc, multiprocessing, sys
from datetime import UTC, datetime
from memtui.demo.generate import make_demo_memories
from memtui.engine.profiles import get_profile
from memtui.errors import MemtuiError
from memtui.planfile import streaming
from memtui.service.plan_stream import plan_streamed
from memtui.service import Service

NOW = datetime(2026, 12, 1, tzinfo=UTC)
memories = [m.with_(user_id=f"u{i % 40}") for i, m in enumerate(make_demo_memories(4000, 3, NOW))]
plan = plan_streamed(memories, get_profile("longterm"), NOW, jobs=2)
written = [0]

def write(self, data):
    written[0] += 1
    if written[0] > 20:
        raise OSError(errno.ENOSPC, "No space left on device")

streaming.AtomicFile.write = write
try:
    Service().plans.write_stream(plan, sys.argv[1], 2)
except MemtuiError as e:
    print("said", e)
# the plan is still held: its workers must be gone all the same
print("workers left", len(multiprocessing.active_children()), "frozen", gc.get_freeze_count())
"""


def test_a_plan_that_cannot_be_written_stops_its_workers(tmp_path: Path) -> None:
    out = tmp_path / "plans" / "plan.json"
    out.parent.mkdir()
    env = {**os.environ, "MEMTUI_DATA": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, "-c", _WRITE_FAILS, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said, left = done.stdout.splitlines()
    assert said == f"said {out}: cannot write the plan there (No space left on device)"
    assert left == "workers left 0 frozen 0"
    assert list(out.parent.iterdir()) == []
