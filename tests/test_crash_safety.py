"""kill -9 at random moments while a child process commits in a loop: the store always loads,
equals the state before or after one transaction, and the ledger and backups agree with it.

Driven by events, not wall time: the child (forked, so no interpreter start per kill) reports
each finished commit on a pipe, and the parent kills it after a random number of reported commits
plus a random delay, so a busy machine changes when the kill lands, never what the test can
assert."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.model import Memory
from memtui.stores import Change, create_native_store, export_store, open_store
from tests.conftest import NOW
from tests.forked import Forked

TOUCHED = 3  # each transaction rewrites these many entries together


def _commit_forever(path: Path, say: Callable[[str], None]) -> None:
    """The child: commits one step after another, saying each step once it is done."""
    say("ready")
    while True:
        store = open_store(path)
        entries = store.memories()[:3]
        n = int(entries[0].content.split("=")[1]) + 1
        changes = [
            Change(m, m.with_(content=f"n={n}", importance=(n % 100) / 100)) for m in entries
        ]
        store.commit(changes, actor="user", kind="edit", reason=f"step {n}", now=datetime.now(UTC))
        say(str(n))


def _make_store(tmp_path: Path, fmt: str, size: int = 2000) -> Path:
    memories = [
        Memory(
            id=str(i + 1),
            content="n=0" if i < TOUCHED else f"memory number {i} " * 3,
            user_id="u1",
            created_at=NOW,
        )
        for i in range(size)
    ]
    native = tmp_path / "native.json"
    create_native_store(native, memories, now=NOW, kind="import", reason="crash test")
    if fmt == "native":
        return native
    dest = tmp_path / ("store.json" if fmt == "pi" else "store.jsonl")
    export_store(open_store(native), dest, "pi" if fmt == "pi" else "longterm-jsonl", NOW)
    return dest


def _check_consistent(path: Path) -> int:
    store = open_store(path)  # must load
    values = {m.content for m in store.memories()[:TOUCHED]}
    assert len(values) == 1, f"torn transaction: {values}"
    n = int(values.pop().split("=")[1])
    edits = [tx for tx in store.transactions() if tx.kind == "edit"]
    assert len(edits) == n, f"store is at step {n} but the ledger has {len(edits)} edits"
    if edits:
        assert {c.after["content"] for c in edits[-1].changes} == {f"n={n}"}
    for backup in store.backups():
        open_store(backup.path)  # every backup is a loadable store
    return n


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["pi", "longterm", "native"])
def test_kill_9_during_commits_never_corrupts(tmp_path: Path, fmt: str) -> None:
    path = _make_store(tmp_path, fmt)
    rng = random.Random(fmt)
    steps: list[int] = []
    reported = 0  # the last step a child said it had committed
    for round_ in range(20):  # three formats: 60 kills in all
        child = Forked(lambda say: _commit_forever(path, say))
        assert child.readline() == "ready\n"
        # every fifth kill lands while the child opens the store, the others after 1-3 commits
        for _ in range(0 if round_ % 5 == 0 else rng.randint(1, 3)):
            line = child.readline()
            assert line, f"the child died before it was killed: {child.kill()}"
            reported = int(line)
        time.sleep(rng.uniform(0.0, 0.03))  # lands anywhere in the next commit, or between two
        err = child.kill()
        assert "Traceback" not in err, err
        step = _check_consistent(path)
        assert step >= reported, f"commit {reported} was reported done but the store is at {step}"
        steps.append(step)
    assert steps == sorted(steps) and reported >= 16, (steps, reported)
    # the ledger is not just consistent but usable: undo the last step
    store = open_store(path)
    store.undo(now=NOW)
    assert store.memories()[0].content == f"n={steps[-1] - 1}"
    json.dumps([tx.id for tx in store.transactions()])
