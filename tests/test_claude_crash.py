"""kill -9 inside multi-file commits to a Claude Code memory folder: after the next open (which
finishes or drops the interrupted change before anything else) the folder is exactly what it
was before the commit or after it, and the ledger agrees.

Driven by events, not wall time: the child (forked, so no interpreter start per kill) stops
before each rename, unlink and fsync it makes and waits for the parent's go-ahead; the parent
kills it at a chosen one of those points, so every kill lands at a known step of the commit.
The points are taken in turn (a commit makes 24 to 35), each at least twice, with a commit let
through after every round (`ROUND`)."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.model import Memory, Status
from memtui.stores import Change, open_store
from memtui.stores.file.folder_tx import INTENT
from tests.conftest import FIXTURES, NOW

TOUCHED = ("feedback_real_db.md", "user_role.md", "team/project_oncall.md")
ROUND = 40  # kill points tried in turn; past a commit's last one it finishes
KILLS = 60


def _step(path: Path) -> None:
    """One transaction: three files rewritten, an index hook rewritten, a file added and one
    removed (the same kinds of change a merge makes)."""
    store = open_store(str(path))
    db = store.get(TOUCHED[0])
    n = int(db.content.split()[0].split("=")[1]) + 1 if db.content.startswith("n=") else 1
    changes = []
    for k, ident in enumerate(TOUCHED):
        m = store.get(ident)
        extra = {**m.extra, "hook": f"step {n}"} if k == 0 else m.extra
        changes.append(Change(m, m.with_(content=f"n={n} file {k}", extra=extra)))
    old = store.find(f"scratch_{n - 1}.md")
    if old is not None:
        changes.append(Change(old, old.with_(status=Status.DELETED)))
    new = Memory(id=f"scratch_{n}.md", content=f"scratch {n}", category="project")
    changes.append(Change(None, new))
    store.commit(changes, actor="user", kind="edit", reason=f"step {n}", now=NOW)


def run_child(path: Path, go_r: int, event_w: int, step: Callable[[Path], None] = _step) -> None:
    """The forked child: stops before each rename, unlink and fsync until told to go on."""
    real = {name: getattr(os, name) for name in ("replace", "unlink", "fsync", "rename")}

    def stopping(name: str):  # type: ignore[no-untyped-def]
        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            os.write(event_w, b"e")
            if os.read(go_r, 1) != b"g":
                os._exit(3)
            return real[name](*args, **kwargs)

        return call

    for name in real:
        setattr(os, name, stopping(name))
    try:
        step(path)
        os.write(event_w, b"d")
        os._exit(0)
    except BaseException as e:  # reported to the parent, which fails
        os.write(event_w, b"x" + repr(e).encode()[:200])
        os._exit(1)


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def _at_step(folder: Path) -> int:
    """The step the folder is at, checked whole: no file torn from the others."""
    store = open_store(str(folder))  # recovers first
    values = {store.get(ident).content.split()[0] for ident in TOUCHED}
    assert len(values) == 1, f"torn transaction: {values}"
    text = values.pop()
    n = int(text.split("=")[1]) if text.startswith("n=") else 0
    scratch = sorted(p.name for p in folder.glob("scratch_*.md"))
    assert scratch == ([f"scratch_{n}.md"] if n else []), scratch
    index = (folder / "MEMORY.md").read_text(encoding="utf-8")
    if n:
        assert f"(feedback_real_db.md) — step {n}\n" in index
        assert f"(scratch_{n}.md)" in index and f"(scratch_{n - 1}.md)" not in index
    edits = [tx for tx in store.transactions() if tx.kind == "edit"]
    assert len(edits) == n, f"the folder is at step {n}, the ledger has {len(edits)} edits"
    assert not list(folder.rglob(".*memtui-new-*")), "a temp file was left in the folder"
    assert not (folder.with_name(folder.name + ".memtui") / INTENT).exists()
    return n


@pytest.mark.slow
def test_kill_9_during_multi_file_commits_leaves_the_folder_before_or_after(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "memory"
    shutil.copytree(FIXTURES / "claude_code" / "basic", folder)
    trees: dict[int, dict[str, bytes]] = {0: _tree(folder)}
    untouched = {
        k: v for k, v in trees[0].items() if k not in {*TOUCHED, "MEMORY.md"}
    }  # every file the steps never touch
    step, kills, finished, runs = 0, 0, 0, 0
    while kills < KILLS:
        go_r, go_w = os.pipe()
        event_r, event_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child)
            os.close(go_w)
            os.close(event_r)
            run_child(folder, go_r, event_w)
        os.close(go_r)
        os.close(event_w)
        kill_at = 1 + (runs - 1) % ROUND  # the first commit goes through (step 0 is not "n=")
        runs += 1
        seen = 0
        while True:
            event = os.read(event_r, 1)
            if event == b"e":
                seen += 1
                if seen == kill_at:
                    os.kill(pid, signal.SIGKILL)
                    kills += 1
                    break
                os.write(go_w, b"g")
                continue
            assert event != b"x", os.read(event_r, 400).decode()
            assert event in (b"d", b""), event
            finished += 1
            break
        os.waitpid(pid, 0)
        os.close(go_w)
        os.close(event_r)
        now_at = _at_step(folder)
        assert now_at in (step, step + 1), (step, now_at)
        step = now_at
        tree = _tree(folder)
        assert {k: tree[k] for k in untouched} == untouched
        # the same step is the same folder, byte for byte, however it was reached
        assert trees.setdefault(step, tree) == tree
    assert finished >= 5 and step >= 20, (finished, step)
    # the ledger is not just consistent but usable: the last step undoes
    store = open_store(str(folder))
    store.undo(now=NOW)
    assert _tree(folder) == trees[step - 1]
