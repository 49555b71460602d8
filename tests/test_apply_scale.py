"""Applying and undoing a whole-store plan in bounded memory (issue 24 item 4), the same bytes
as a plain apply and undo, and undo of transactions that memtui recorded before the change.

The bound: a generated native store of 20k entries and 20 users, its `longterm` plan file
applied (every pre-approved action, ~19k changes) and then undone in a process whose data
segment may grow only `BUDGET_MB[step]` past what the open store takes (`resource.setrlimit`).
Measured by bisection of that budget (2026-12-03, to 10 MB): apply needs about 90 MB past the
open store, 120 when it holds the plan's actions through the commit (before `release`); undo
about 90, 110 when the commit held the file it replaces through the write (before `_Sources`
read it back from the backup). On 2026-12-07, with the plan file read a user at a time, the
apply needs about 63 (the commit: its changes and their images). On 2026-12-02 the code of
941f690 needed about 600 MB for the apply (it read a plan file into a buffer of
PLAN_V2_SIZE_LIMIT first, and kept two image dicts per change)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.demo.generate import make_demo_memories
from memtui.jsonout import dumps
from memtui.service import Service
from memtui.service.plans import apply_plan
from memtui.stores import Change, Transaction, create_native_store, open_store
from tests.conftest import NOW

resource = pytest.importorskip("resource")

ENTRIES, USERS = 20_000, 20
BUDGET_MB = {"apply": 80, "undo": 115}
PLANNED = datetime(2026, 12, 1, tzinfo=UTC)
APPLIED = datetime(2026, 12, 1, 0, 5, tzinfo=UTC)
UNDONE = datetime(2026, 12, 1, 0, 10, tzinfo=UTC)
FIXTURES = Path(__file__).parent / "fixtures" / "applyscale"

_BOUNDED = """
import resource, sys
from datetime import datetime
from memtui.service import Service
from memtui.service.plan_apply import commit_ready

def data_segment():
    for line in open("/proc/self/status"):
        if line.startswith("VmData:"):
            return int(line.split()[1]) << 10

path, plan_path, budget, what, when = sys.argv[1:6]
svc = Service()
store = svc.stores.open(path)
store.memories()
if budget != "none":
    limit = data_segment() + (int(budget) << 20)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
now = datetime.fromisoformat(when)
if what == "apply":  # as `memtui apply` does: the plan file read a user at a time
    tx = commit_ready(store, svc.plans.ready_from_file(plan_path, store), now=now)
else:
    tx = store.undo(now=now)
print(what, len(tx.changes))
"""


def _bounded(
    store: Path, plan: Path, what: str, when: datetime, budget: int | None = -1
) -> subprocess.CompletedProcess[str]:
    """`what` (apply the plan file, or undo the newest transaction) in a process whose data
    segment may grow `budget` MB past the open store (None: no bound; -1: `BUDGET_MB`)."""
    if budget == -1:
        budget = BUDGET_MB[what]
    args = [str(store), str(plan), str(budget or "none"), what, when.isoformat()]
    return subprocess.run(
        [sys.executable, "-c", _BOUNDED, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONFAULTHANDLER": ""},
        check=False,
    )


def _fresh(source: Path, store: Path) -> None:
    shutil.rmtree(store.with_name(store.name + ".memtui"), ignore_errors=True)
    shutil.copyfile(source, store)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_whole_store_plan_applies_and_undoes_within_the_bound_as_a_plain_one_does(
    tmp_path: Path,
) -> None:
    memories = make_demo_memories(ENTRIES, 11, NOW)
    memories = [m.with_(user_id=f"user-{i % USERS:02d}") for i, m in enumerate(memories)]
    source = tmp_path / "generated.json"
    create_native_store(source, memories, now=NOW, kind="import", reason="test")
    store = tmp_path / "store.json"
    _fresh(source, store)
    svc = Service()
    opened = svc.stores.open(str(store))
    plan_file = tmp_path / "plan.json"
    profile = svc.profiles.profile(opened, "longterm")
    svc.plans.write_stream(svc.plans.plan_stream(opened, profile, now=PLANNED), str(plan_file))
    # a plain apply (the plan read whole) and undo, no bound, in this process
    apply_plan(opened, svc.plans.load_plan(str(plan_file), opened), None, now=APPLIED)
    applied = store.read_bytes()
    open_store(str(store)).undo(now=UNDONE)
    undone = store.read_bytes()

    _fresh(source, store)
    done = _bounded(store, plan_file, "apply", APPLIED)
    assert done.returncode == 0, done.stderr[-2000:]
    changed = int(done.stdout.split()[1])
    assert changed > ENTRIES // 2  # a whole-store plan: most entries change
    assert store.read_bytes() == applied

    done = _bounded(store, plan_file, "undo", UNDONE)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["undo", str(changed)]
    assert store.read_bytes() == undone
    back = {m.id: m for m in open_store(str(store)).memories()}
    assert back == {m.id: m for m in open_store(str(source)).memories()}


@pytest.mark.parametrize("fmt", ["pi", "native"])
def test_a_transaction_recorded_before_the_change_undoes_as_it_did(
    fmt: str, tmp_path: Path
) -> None:
    """The store and sidecar after an apply by memtui 941f690, and the file its own undo
    then wrote (tests/fixtures/applyscale/make_fixture.py): undone now, the same bytes."""
    here = FIXTURES / fmt
    store = tmp_path / "store.json"
    shutil.copyfile(here / "applied.json", store)
    shutil.copytree(here / "applied.json.memtui", tmp_path / "store.json.memtui")
    opened = open_store(str(store))
    target = opened.transactions()[-1]
    assert target.kind == "plan" and len(target.changes) > 200
    tx = opened.undo(now=UNDONE)
    assert tx.undoes == target.id and len(tx.changes) == len(target.changes)
    assert store.read_bytes() == (here / "undone.json").read_bytes()


def _pi_store(tmp_path: Path, copies: int, cut_emoji: bool = False) -> Path:
    """realistic-store.json's entries `copies` times (new ids), as a pi file; with
    `cut_emoji`, the first entry's content ends in half an emoji (a lone surrogate, as pi
    leaves text it cuts at 500 UTF-16 units)."""
    value = json.loads((FIXTURES.parent / "realistic-store.json").read_text())
    value["memories"] = [
        {**m, "id": f"{m['id']}_{n}"} for n in range(copies) for m in value["memories"]
    ]
    if cut_emoji:
        value["memories"][0]["content"] += "\ud83d"
    path = tmp_path / "store.json"
    # as pi writes it: JSON.stringify(value, null, 2), a lone surrogate escaped
    text = json.dumps(value, indent=2, ensure_ascii=False).replace("\ud83d", "\\ud83d")
    path.write_text(text, encoding="utf-8")
    return path


def _importance_halved(path: Path) -> tuple[Transaction, bytes]:
    store = open_store(str(path))
    before = path.read_bytes()
    changes = [Change(m, m.with_(importance=m.importance / 2)) for m in store.memories()]
    tx = store.commit(changes, actor="user", kind="edit", reason="halved", now=APPLIED)
    return tx, before


def _ledger_lines(path: Path) -> list[bytes]:
    return (path.with_name(path.name + ".memtui") / "ledger.jsonl").read_bytes().splitlines()


@pytest.mark.parametrize(
    ("copies", "cut_emoji"), [(12, False), (1, True)], ids=["chunked", "lone-surrogate"]
)
def test_a_sidecar_ledger_line_is_the_one_json_line_it_was(
    tmp_path: Path, copies: int, cut_emoji: bool
) -> None:
    """A transaction's intent written a chunk of changes at a time (3,600 changes: several
    MB) is the line one `dumps` of it gives; one that orjson cannot write (a lone
    surrogate) is written whole as before; either way undo gives the file back."""
    path = _pi_store(tmp_path, copies, cut_emoji)
    tx, before = _importance_halved(path)
    intent = _ledger_lines(path)[0]
    assert len(tx.changes) == 300 * copies
    assert intent == dumps({"tx": tx.to_dict(), "store": str(path)})
    assert len(intent) > 1_000_000 or cut_emoji
    open_store(str(path)).undo(now=UNDONE)
    assert path.read_bytes() == before
