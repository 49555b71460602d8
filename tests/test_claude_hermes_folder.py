"""Hermes Agent's `memories` folder as one store (MEMORY.md and USER.md, users `memory` and
`user`), changed in one multi-file transaction under Hermes' locks on both files. Fixtures made
by Hermes' own code (tests/fixtures/README.md, hermes/)."""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.errors import MemtuiError, StoreLockedError
from memtui.model import Memory, Status
from memtui.stores import Change, open_store
from memtui.stores.file.folder_store import HermesFolderStore
from memtui.stores.formats import hermes as hermes_format
from tests.conftest import FIXTURES, NOW, CliResult
from tests.test_claude_crash import run_child

DELIMITER = "\n§\n"
LIMITS = {"MEMORY.md": 2200, "USER.md": 1375}
Cli = Callable[..., CliResult]


def hermes_read(path: Path) -> list[str]:
    """Hermes' `_read_file` and its load-time dedupe (tools/memory_tool.py)."""
    raw = path.read_text(encoding="utf-8")
    if not raw.strip():
        return []
    return list(dict.fromkeys(e for e in (p.strip() for p in raw.split(DELIMITER)) if e))


def hermes_accepts(path: Path) -> bool:
    """Hermes' drift guard passes the file, and it is exactly what Hermes writes."""
    raw = path.read_text(encoding="utf-8")
    parsed = hermes_read(path)
    joined = DELIMITER.join(parsed)
    return raw == joined and all(len(e) <= LIMITS[path.name] for e in parsed)


def tree(folder: Path) -> dict[str, bytes]:
    """The folder's files but Hermes' lock files (0 bytes, made as Hermes makes them)."""
    return {
        p.name: p.read_bytes()
        for p in folder.iterdir()
        if p.is_file() and not p.name.endswith(".lock")
    }


@pytest.fixture
def memories(tmp_path: Path) -> Path:
    folder = tmp_path / "memories"
    folder.mkdir()
    for name in ("MEMORY.md", "USER.md"):
        shutil.copyfile(FIXTURES / "hermes" / "basic" / name, folder / name)
        (folder / name).chmod(0o600)
    return folder


def test_the_folder_opens_as_one_store_with_two_users(memories: Path) -> None:
    store = open_store(str(memories))
    assert isinstance(store, HermesFolderStore) and store.format_name == "hermes-folder"
    by_user = {
        u: [m.content for m in store.memories() if m.user_id == u] for u in ("memory", "user")
    }
    assert by_user == {
        "memory": hermes_read(memories / "MEMORY.md"),
        "user": hermes_read(memories / "USER.md"),
    }
    # one file still opens as before
    assert open_store(str(memories / "USER.md")).format_name == "hermes"


def test_edit_both_files_in_one_transaction_then_undo_gives_back_both(memories: Path) -> None:
    original = tree(memories)
    store = open_store(str(memories))
    note = next(m for m in store.memories() if m.user_id == "memory")
    fact = next(m for m in store.memories() if m.user_id == "user")
    tx = store.commit(
        [
            Change(note, note.with_(content=note.content + " (checked)")),
            Change(fact, fact.with_(content=fact.content + " (checked)")),
        ],
        actor="user",
        kind="edit",
        reason="both",
        now=NOW,
    )
    assert {c.id for c in tx.changes} == {note.id, fact.id}
    for name in ("MEMORY.md", "USER.md"):
        assert hermes_accepts(memories / name)
        assert any(e.endswith("(checked)") for e in hermes_read(memories / name))
    # the ids survive a fresh open (kept in the folder's ledger), so undo finds them
    again = open_store(str(memories))
    assert again.get(note.id).content.endswith("(checked)")
    again.undo(now=NOW)
    assert tree(memories) == original


def test_a_merge_within_the_notes_keeps_within_the_cap_and_undoes(memories: Path) -> None:
    original = tree(memories)
    store = open_store(str(memories))
    a, b = [m for m in store.memories() if m.user_id == "memory"][:2]
    merged = Memory(
        id=store.new_id(NOW),
        content=f"{a.content} {b.content}",
        category="fact",
        user_id="memory",
        supersedes=(a.id, b.id),
    )
    store.commit(
        [
            Change(None, merged),
            Change(a, a.with_(status=Status.MERGED, superseded_by=merged.id)),
            Change(b, b.with_(status=Status.MERGED, superseded_by=merged.id)),
        ],
        actor="user",
        kind="merge",
        reason="merge",
        now=NOW,
    )
    entries = hermes_read(memories / "MEMORY.md")
    assert merged.content in entries and a.content not in entries
    assert hermes_accepts(memories / "MEMORY.md")
    assert (memories / "USER.md").read_bytes() == original["USER.md"]
    open_store(str(memories)).undo(now=NOW)
    assert tree(memories) == original


def test_over_the_cap_is_refused_with_the_numbers_nothing_written(memories: Path) -> None:
    before = tree(memories)
    store = open_store(str(memories))
    fact = next(m for m in store.memories() if m.user_id == "user")
    with pytest.raises(MemtuiError, match=r"USER\.md would hold [\d,]+ of 1,375 characters"):
        store.commit(
            [Change(fact, fact.with_(content="x" * 1400))],
            actor="user",
            kind="edit",
            reason="",
            now=NOW,
        )
    assert tree(memories) == before


def test_a_write_waits_for_hermes_lock_on_either_file(
    memories: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hermes_format, "HERMES_LOCK_WAIT_S", 0.05)
    before = tree(memories)
    store = open_store(str(memories))
    note = next(m for m in store.memories() if m.user_id == "memory")
    with open(memories / "USER.md.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(StoreLockedError, match="Hermes Agent is writing it"):
            store.commit(
                [Change(note, note.with_(content="changed"))],
                actor="user",
                kind="edit",
                reason="",
                now=NOW,
            )
    assert tree(memories) == before


def test_the_cli_lists_both_users(memories: Path, cli: Cli) -> None:
    stats = cli("stats", memories)
    assert stats.code == 0, stats.err
    assert "hermes-folder store" in stats.out
    assert "users       memory" in stats.out and "user " in stats.out


# -- kill -9 inside a commit to both files -----------------------------------------------------


def _hermes_step(folder: Path) -> None:
    from memtui.stores import open_store as reopen

    store = reopen(str(folder))
    first = {u: next(m for m in store.memories() if m.user_id == u) for u in ("memory", "user")}
    n = int(first["memory"].content.split()[0].split("=")[1]) + 1
    changes = [Change(m, m.with_(content=f"n={n} {u}")) for u, m in first.items()]
    store.commit(changes, actor="user", kind="edit", reason=f"step {n}", now=NOW)


@pytest.mark.slow
def test_kill_9_inside_commits_leaves_both_files_before_or_after(tmp_path: Path) -> None:
    import os
    import random
    import signal

    folder = tmp_path / "memories"
    folder.mkdir()
    (folder / "MEMORY.md").write_text(DELIMITER.join(["n=0 memory", "Untouched note."]))
    (folder / "USER.md").write_text(DELIMITER.join(["n=0 user", "Untouched fact."]))
    rng = random.Random(66654)
    step, kills = 0, 0
    while kills < 40:
        go_r, go_w = os.pipe()
        event_r, event_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child)
            run_child(folder, go_r, event_w, _hermes_step)
        os.close(go_r)
        os.close(event_w)
        kill_at, seen = rng.randint(1, 30), 0
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
            assert event in (b"d", b""), "the child failed"
            break
        os.waitpid(pid, 0)
        os.close(go_w)
        os.close(event_r)
        store = open_store(str(folder))  # finishes or drops the interrupted change first
        notes, facts = hermes_read(folder / "MEMORY.md"), hermes_read(folder / "USER.md")
        assert notes[1:] == ["Untouched note."] and facts[1:] == ["Untouched fact."]
        n_memory, n_user = (int(e[0].split()[0].split("=")[1]) for e in (notes, facts))
        assert n_memory == n_user, "torn: one file has the change, the other not"
        assert n_memory in (step, step + 1)
        step = n_memory
        assert len([t for t in store.transactions() if t.kind == "edit"]) == step
        assert hermes_accepts(folder / "MEMORY.md") and hermes_accepts(folder / "USER.md")
    assert step >= 5


def test_a_folder_with_one_note_and_no_user_file_is_hermes(tmp_path: Path) -> None:
    folder = tmp_path / "memories"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("The only note so far.", encoding="utf-8")
    store = open_store(str(folder))
    assert store.format_name == "hermes-folder"
    assert [m.content for m in store.memories()] == ["The only note so far."]
