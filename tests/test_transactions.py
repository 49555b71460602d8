"""Commits, the ledger, backups, undo, rollback and outside writers."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memtui.errors import ConflictError, MemtuiError, StoreLockedError
from memtui.model import Memory, Status
from memtui.stores import Change, Store, create_native_store, open_store
from tests.conftest import FIXTURES, NOW, assert_same_but_versions, unversioned

STORES = ["realistic-store.json", "items.jsonl", "native"]


@pytest.fixture
def store_path(
    request: pytest.FixtureRequest, fixture_copy: Callable[[str], Path], tmp_path: Path
) -> Path:
    if request.param == "native":
        source = open_store(fixture_copy("realistic-store.json"))
        path = tmp_path / "native.json"
        create_native_store(path, source.memories(), now=NOW, kind="import", reason="test")
        return path
    return fixture_copy(request.param)


def _memories_by_id(path: Path) -> dict[str, Memory]:
    """The entries, but for their version counters (longterm moves them on every change)."""
    return unversioned({m.id: m for m in open_store(path).memories()})


def _edit(store: Store, index: int, **changes: object) -> Change:
    before = store.memories()[index]
    return Change(before, before.with_(**changes))


@pytest.mark.parametrize("store_path", STORES, indirect=True)
def test_commit_writes_once_records_the_ledger_and_keeps_a_backup(store_path: Path) -> None:
    original = store_path.read_bytes()
    store = open_store(store_path)
    changes = [_edit(store, i, importance=0.123) for i in range(3)]
    tx = store.commit(changes, actor="user", kind="edit", reason="three", now=NOW)
    reread = open_store(store_path)
    assert [reread.get(c.id).importance for c in changes] == [0.123] * 3
    [recorded] = reread.history()[:1]
    assert (recorded.id, recorded.kind, recorded.reason) == (tx.id, "edit", "three")
    assert recorded.memory_ids == [c.id for c in changes]
    assert recorded.changes[0].before["importance"] == changes[0].before.importance
    assert recorded.changes[0].after["importance"] == 0.123
    [backup] = [b for b in reread.backups() if b.tx_id == tx.id]
    assert backup.path.read_bytes() == original


@pytest.mark.parametrize("store_path", STORES, indirect=True)
def test_undo_restores_before_images_and_undoing_the_undo_restores_after(store_path: Path) -> None:
    before_bytes = store_path.read_bytes()
    before = _memories_by_id(store_path)
    store = open_store(store_path)
    ids = list(before)
    changes = [
        _edit(store, 0, content="rewritten", tags=("x",)),
        Change(store.get(ids[1]), store.get(ids[1]).with_(status=Status.ARCHIVED)),
        Change(None, Memory(id=store.new_id(NOW), content="a brand new memory", created_at=NOW)),
    ]
    edit = store.commit(changes, actor="user", kind="edit", reason="mixed", now=NOW)
    after = _memories_by_id(store_path)
    assert after != before

    undo = open_store(store_path).undo(now=NOW + timedelta(seconds=1))
    assert undo.undoes == edit.id
    assert _memories_by_id(store_path) == before
    if open_store(store_path).format_name == "pi":
        assert store_path.read_bytes() == before_bytes
    elif open_store(store_path).format_name == "longterm":
        assert_same_but_versions(store_path.read_bytes(), before_bytes)

    open_store(store_path).undo(undo.id, now=NOW + timedelta(seconds=2))
    assert _memories_by_id(store_path) == after
    assert open_store(store_path).undone() == {undo.id: undo.id + 1}


def test_undo_on_pi_gives_back_the_entry_bytes(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("realistic-store.json")
    original = json.loads(path.read_bytes())
    store = open_store(path)
    victims = store.memories()[5:8]
    store.commit(
        [Change(m, m.with_(status=Status.MERGED, superseded_by="x")) for m in victims],
        actor="plan",
        kind="merge",
        reason="gone from the file",
        now=NOW,
    )
    assert len(json.loads(path.read_bytes())["memories"]) == 297
    assert json.loads(path.read_bytes())["updatedAt"] != original["updatedAt"]
    open_store(path).undo(now=NOW)
    assert path.read_bytes() == (FIXTURES / "realistic-store.json").read_bytes()


def test_an_already_undone_transaction_is_refused(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("items.jsonl")
    store = open_store(path)
    tx = store.commit(
        [_edit(store, 0, importance=0.3)], actor="user", kind="edit", reason="", now=NOW
    )
    store.undo(tx.id, now=NOW)
    with pytest.raises(MemtuiError, match="already undone"):
        store.undo(tx.id, now=NOW)


@pytest.mark.parametrize("store_path", STORES, indirect=True)
def test_outside_write_to_other_entries_is_rebased_not_lost(store_path: Path) -> None:
    store = open_store(store_path)
    mine = _edit(store, 0, content="memtui's edit")
    outsider = open_store(store_path)
    theirs = _edit(outsider, 10, content="the agent's edit")
    outsider.commit([theirs], actor="user", kind="edit", reason="agent", now=NOW)
    assert store.changed_on_disk()
    store.commit([mine], actor="user", kind="edit", reason="memtui", now=NOW)
    final = _memories_by_id(store_path)
    assert final[mine.id].content == "memtui's edit"
    assert final[theirs.id].content == "the agent's edit"


@pytest.mark.parametrize("store_path", STORES, indirect=True)
def test_outside_write_to_the_same_entry_is_refused(store_path: Path) -> None:
    store = open_store(store_path)
    mine = _edit(store, 0, content="memtui's edit")
    outsider = open_store(store_path)
    outsider.commit(
        [_edit(outsider, 0, content="the agent's edit")],
        actor="user",
        kind="edit",
        reason="agent",
        now=NOW,
    )
    on_disk = store_path.read_bytes()
    with pytest.raises(ConflictError, match="changed since memtui read it"):
        store.commit([mine], actor="user", kind="edit", reason="memtui", now=NOW)
    assert store_path.read_bytes() == on_disk
    assert _memories_by_id(store_path)[mine.id].content == "the agent's edit"


def test_outside_raw_write_by_the_agent_is_detected(fixture_copy: Callable[[str], Path]) -> None:
    """pi itself rewrites the file (temp + rename) while memtui has it open."""
    path = fixture_copy("example-store.json")
    store = open_store(path)
    data = json.loads(path.read_bytes())
    data["memories"][0]["content"] = "pi rewrote this"
    data["memories"].append({**data["memories"][1], "id": "mem_new", "content": "added by pi"})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False))
    os.replace(tmp, path)
    assert store.changed_on_disk()
    first = store.memories()[0]
    with pytest.raises(ConflictError):
        store.commit(
            [Change(first, first.with_(importance=0.1))],
            actor="user",
            kind="edit",
            reason="",
            now=NOW,
        )
    second = store.memories()[2]
    store.commit(
        [Change(second, second.with_(importance=0.1))],
        actor="user",
        kind="edit",
        reason="",
        now=NOW,
    )
    final = json.loads(path.read_bytes())["memories"]
    assert final[0]["content"] == "pi rewrote this" and final[-1]["content"] == "added by pi"
    assert final[2]["potency"] == 0.1


def test_pi_lock_held_by_another_process_refuses(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("example-store.json")
    lock = path.with_name(path.name + ".lock")
    lock.write_text("12345")
    original = path.read_bytes()
    store = open_store(path)
    with pytest.raises(StoreLockedError, match="locked by another process"):
        store.commit(
            [_edit(store, 0, importance=0.5)], actor="user", kind="edit", reason="", now=NOW
        )
    assert path.read_bytes() == original and lock.exists()


def test_a_stale_lock_is_broken(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("example-store.json")
    lock = path.with_name(path.name + ".lock")
    lock.write_text("old")
    old = lock.stat().st_mtime - 60
    os.utime(lock, (old, old))
    store = open_store(path)
    store.commit([_edit(store, 0, importance=0.5)], actor="user", kind="edit", reason="", now=NOW)
    assert open_store(path).memories()[0].importance == 0.5 and not lock.exists()


def test_backups_roll_over(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("items.jsonl")
    store = Store.open(path, keep_backups=3)
    for n in range(5):
        store.commit(
            [_edit(store, 0, importance=n / 10)],
            actor="user",
            kind="edit",
            reason="",
            now=NOW + timedelta(minutes=n),
        )
    assert [b.tx_id for b in store.backups()] == [5, 4, 3]


@pytest.mark.parametrize("store_path", STORES, indirect=True)
def test_rollback_restores_a_backup_and_is_itself_undoable(store_path: Path) -> None:
    before = _memories_by_id(store_path)
    store = open_store(store_path)
    store.commit([_edit(store, 0, content="one")], actor="user", kind="edit", reason="", now=NOW)
    store.commit([_edit(store, 1, content="two")], actor="user", kind="edit", reason="", now=NOW)
    changed = _memories_by_id(store_path)
    oldest = store.backups()[-1]
    tx = store.rollback(oldest.name, now=NOW)
    assert tx.kind == "rollback" and _memories_by_id(store_path) == before
    assert any(b.tx_id == tx.id for b in store.backups())
    store.undo(tx.id, now=NOW)
    assert _memories_by_id(store_path) == changed


def test_nothing_to_change_is_refused(fixture_copy: Callable[[str], Path]) -> None:
    store = open_store(fixture_copy("items.jsonl"))
    with pytest.raises(MemtuiError, match="nothing to change"):
        store.commit([], actor="user", kind="edit", reason="", now=NOW)


def test_pending_transaction_of_a_dead_writer_is_resolved(
    fixture_copy: Callable[[str], Path],
) -> None:
    """The writer died after the ledger's intent and before the store's rename."""
    path = fixture_copy("items.jsonl")
    store = open_store(path)
    tx = store.commit(
        [_edit(store, 0, importance=0.9)], actor="user", kind="edit", reason="", now=NOW
    )
    ledger = store.sidecar / "ledger.jsonl"
    lines = ledger.read_bytes().splitlines(keepends=True)
    intent = json.loads(lines[0])["tx"]
    # a second intent that never reached the file, and a torn half line after it
    ghost = {**intent, "id": 2, "sha_after": "0" * 64}
    ghost["changes"] = [
        {**c, "after_raw": {**c["after_raw"], "importance": 0.42}} for c in intent["changes"]
    ]
    ledger.write_bytes(b"".join(lines) + json.dumps({"tx": ghost}).encode() + b'\n{"tx": {"id')
    reread = open_store(path)
    assert [t.id for t in reread.transactions()] == [tx.id]
    reread.commit([_edit(reread, 1, importance=0.2)], actor="user", kind="edit", reason="", now=NOW)
    assert [t.id for t in open_store(path).transactions()] == [1, 3]


# After a commit, undo or rollback the store knows its history without reading its ledger
# again: what it shows must be what a fresh read of the file and ledger gives.


def _history(store: Store) -> list[dict[str, object]]:
    return [tx.to_dict() for tx in store.history()]


def _same_as_fresh(store: Store, path: Path) -> None:
    fresh = open_store(path)
    assert _history(store) == _history(fresh)
    assert store.undone() == fresh.undone()
    assert store.problems() == fresh.problems()


@pytest.mark.parametrize("store_path", STORES, indirect=True)
def test_history_after_commits_undo_and_rollback_is_what_a_fresh_read_gives(
    store_path: Path,
) -> None:
    store = open_store(store_path)
    before = len(store.history())  # read once before the changes: the cache is warm
    live = store.memories()
    first = store.commit(
        [Change(m, m.with_(importance=0.25)) for m in live[:3]],
        actor="user",
        kind="edit",
        reason="three",
        now=NOW,
    )
    _same_as_fresh(store, store_path)
    later = NOW + timedelta(minutes=1)
    retired = store.memories()[4]
    store.commit(
        [Change(retired, retired.with_(importance=0.5, tags=("kept",)))],
        actor="plan",
        kind="plan",
        reason="one",
        now=later,
    )
    _same_as_fresh(store, store_path)
    store.undo(now=later + timedelta(minutes=1))
    _same_as_fresh(store, store_path)
    assert [tx.kind for tx in store.history()][:1] == ["undo"]
    store.rollback(first.backup, now=later + timedelta(minutes=2))
    _same_as_fresh(store, store_path)
    assert len(store.history()) == before + 4
