"""Stores that do not bloat: a native journal of changed fields, `memtui compact`, compressed
and deduplicated backups — with undo and rollback exactly as before."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from memtui.errors import MemtuiError
from memtui.model import Memory, Status
from memtui.service import Service
from memtui.stores import Change, Store, create_native_store, open_store
from memtui.stores.file import backups
from memtui.stores.file.compaction import ARCHIVE, compact_store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def _native(path: Path, n: int = 60) -> Path:
    memories = [
        Memory(
            id=f"n{i}",
            content=f"native memory number {i} with some words in it",
            user_id=f"u{i % 3}",
            created_at=NOW - timedelta(days=i),
            tags=("t",),
        )
        for i in range(n)
    ]
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    return path


def _history(path: Path) -> None:
    """Edits, a merge (creates an entry, retires two), an archive and an undo."""
    at = NOW
    for i in range(5):
        store = open_store(path)
        at += timedelta(minutes=1)
        store.commit(
            [
                Change(m, m.with_(importance=0.1 * i))
                for m in store.memories()[10 * i : 10 * i + 10]
            ],
            actor="user",
            kind="edit",
            reason=f"edit {i}",
            now=at,
        )
    Service(clock=lambda: at).merges.merge(open_store(path), ["n21", "n24"], content="merged")
    store = open_store(path)
    m = store.get("n30")
    store.commit(
        [Change(m, m.with_(status=Status.ARCHIVED))], actor="user", kind="edit", reason="", now=at
    )
    open_store(path).undo(3, now=at + timedelta(minutes=1))


def _journal(path: Path) -> list[dict[str, object]]:
    return list(orjson.loads(path.read_bytes())["journal"].values())


def _memories_table(path: Path) -> bytes:
    return orjson.dumps(orjson.loads(path.read_bytes())["memories"])


def _as_full_images(path: Path) -> None:
    """The journal as memtui wrote it before (a whole before and after image per change)."""
    store = open_store(path)
    tables = orjson.loads(path.read_bytes())
    for n, tx in enumerate(store.transactions(), start=1):
        for change in tx.changes:
            change.compact = False
        tables["journal"][str(n)] = tx.to_dict()
    path.write_bytes(orjson.dumps(tables))


def test_the_native_journal_holds_what_changed(tmp_path: Path) -> None:
    path = _native(tmp_path / "n.json")
    _history(path)
    journal = _journal(path)
    edit = next(tx for tx in journal if tx["reason"] == "edit 1")
    change = edit["changes"][0]  # type: ignore[index]
    assert set(change) == {"id", "diff", "after_fp", "position"}
    assert change["diff"] == {"importance": [0.8, 0.1]}
    merge = next(tx for tx in journal if tx["kind"] == "merge")
    created = [c for c in merge["changes"] if c.get("before", 0) is None]  # type: ignore[union-attr]
    assert len(created) == 1 and created[0]["after"]["content"] == "merged"
    # the images are whole again once read
    tx = open_store(path).transaction(edit["id"])  # type: ignore[arg-type]
    assert tx.changes[0].before is not None and tx.changes[0].before["importance"] == 0.8
    assert tx.changes[0].after is not None and tx.changes[0].after["content"].startswith("native")


def _copies(path: Path, tmp_path: Path, names: list[str]) -> list[Path]:
    out = []
    for name in names:
        folder = tmp_path / name
        folder.mkdir()
        out.append(Path(shutil.copy(path, folder / path.name)))
    return out


@pytest.mark.parametrize("limit", [{}, {"keep": 4}, {"days": 0.0}])
def test_undo_after_compaction_restores_what_undo_before_it_did(
    tmp_path: Path, limit: dict[str, float]
) -> None:
    path = _native(tmp_path / "n.json")
    _history(path)
    _as_full_images(path)
    txs = open_store(path).transactions()
    undoable = [tx.id for tx in txs if tx.changes and tx.id not in open_store(path).undone()]
    size = path.stat().st_size
    done = compact_store(open_store(path), now=NOW + timedelta(days=1), **limit)  # type: ignore[arg-type]
    assert path.stat().st_size < size and done.bytes_after == path.stat().st_size
    kept = {tx.id for tx in open_store(path).transactions()}
    assert len(kept) == done.kept and done.kept + done.moved == len(txs)
    if limit:
        archived = [
            json.loads(line)["tx"] for line in (path.parent / "n.json.memtui" / ARCHIVE).open()
        ]
        assert [tx["id"] for tx in archived] == [tx.id for tx in txs][: done.moved]
        assert "before" in archived[-1]["changes"][0]  # whole images, for the record
    assert any(tx in kept for tx in undoable)
    restored = 0
    for tx_id in undoable:
        [after] = _copies(path, tmp_path, [f"a{tx_id}"])
        reference = _copy_uncompacted(tmp_path, tx_id)
        if tx_id not in kept:
            with pytest.raises(Exception, match=f"no transaction {tx_id}"):
                open_store(after).undo(tx_id, now=NOW + timedelta(days=2))
            continue
        result = _undo(after, tx_id)
        assert result == _undo(reference, tx_id)
        restored += isinstance(result, bytes)
    assert restored >= (1 if limit else 4)


def _undo(path: Path, tx_id: int) -> bytes | str:
    """The memories table after undoing `tx_id`, or why the undo was refused."""
    try:
        open_store(path).undo(tx_id, now=NOW + timedelta(days=2))
    except MemtuiError as e:
        return str(e).replace(str(path), "STORE")
    return _memories_table(path)


def _copy_uncompacted(tmp_path: Path, tx_id: int) -> Path:
    """A copy of the store before compaction (kept by compaction as its backup)."""
    store = open_store(tmp_path / "n.json")
    [backup] = [b for b in store.backups() if b.tx_id == 0]
    folder = tmp_path / f"ref{tx_id}"
    folder.mkdir()
    path = folder / "n.json"
    path.write_bytes(backups.BackupShelf(backup.path.parent, ".json").read(backup))
    return path


def test_compact_on_the_command_line(tmp_path: Path, cli: Cli) -> None:
    path = _native(tmp_path / "n.json")
    _history(path)
    total = len(_journal(path))
    result = cli("compact", path, "--keep", "3", "--json")
    assert result.code == 0, result.err
    done = json.loads(result.out)
    assert (done["kept"], done["moved"]) == (3, total - 3)
    assert len(json.loads(cli("history", path, "--json").out)) == 3
    assert cli("undo", path).code == 0
    refused = cli("compact", path, "--keep", "0")
    assert refused.code == 2 and "at least 1" in refused.err
    pi = tmp_path / "pi"
    pi.mkdir()
    other = shutil.copy(Path(__file__).parent / "fixtures" / "example-store.json", pi)
    assert "compact works on native stores" in cli("compact", other).err


def test_compressed_backups_roll_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backups, "PACK_OVER", 0)
    path = _native(tmp_path / "n.json")
    original = _memories_table(path)
    for i in range(3):
        store = open_store(path)
        m = store.get(f"n{i}")
        store.commit(
            [Change(m, m.with_(content=f"edit {i}"))],
            actor="user",
            kind="edit",
            reason="",
            now=NOW + timedelta(minutes=i),
        )
    listed = open_store(path).backups()
    heads = [b.path.read_bytes()[:2] for b in listed]
    assert heads[0] == b'{"' and all(h == b"\x1f\x8b" for h in heads[1:])  # newest plain
    assert gzip.decompress(listed[-1].path.read_bytes()).startswith(b"{")
    assert open_store(listed[-1].path).get("n0").content.startswith("native")  # opened to look at
    open_store(path).rollback(listed[-1].name, now=NOW + timedelta(hours=1))
    assert _memories_table(path) == original
    with pytest.raises(Exception, match="compressed backup"):
        looked = open_store(listed[-1].path)
        looked.commit(
            [Change(looked.get("n5"), looked.get("n5").with_(content="x"))],
            actor="user",
            kind="edit",
            reason="",
            now=NOW,
        )


def test_an_old_plain_backup_still_rolls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _native(tmp_path / "n.json")
    original = _memories_table(path)
    store = open_store(path)
    m = store.get("n1")
    store.commit(
        [Change(m, m.with_(content="changed"))], actor="user", kind="edit", reason="", now=NOW
    )
    [backup] = open_store(path).backups()
    assert backup.path.read_bytes()[:1] == b"{"
    open_store(path).rollback(backup.name, now=NOW + timedelta(hours=1))
    assert _memories_table(path) == original


def test_identical_consecutive_backups_are_stored_once(tmp_path: Path) -> None:
    path = _native(tmp_path / "n.json")
    first = path.read_bytes()
    store = open_store(path)
    m = store.get("n1")
    store.commit([Change(m, m.with_(content="one"))], actor="user", kind="edit", reason="", now=NOW)
    path.write_bytes(first)  # someone puts the old file back
    store = open_store(path)
    m = store.get("n1")
    store.commit(
        [Change(m, m.with_(content="two"))],
        actor="user",
        kind="edit",
        reason="",
        now=NOW + timedelta(minutes=1),
    )
    newer, older = open_store(path).backups()
    assert newer.name != older.name
    assert os.stat(newer.path).st_ino == os.stat(older.path).st_ino
    assert newer.path.read_bytes() == first
    open_store(path).rollback(newer.name, now=NOW + timedelta(hours=1))
    assert open_store(path).get("n1").content.startswith("native")


def test_a_store_changed_outside_memtui_refuses_an_undo_it_cannot_rebuild(tmp_path: Path) -> None:
    path = _native(tmp_path / "n.json")
    store = open_store(path)
    m = store.get("n1")
    tx = store.commit(
        [Change(m, m.with_(importance=0.2))], actor="user", kind="edit", reason="", now=NOW
    )
    tables = orjson.loads(path.read_bytes())
    [key] = [k for k, r in tables["memories"].items() if r["id"] == "n1"]
    tables["memories"][key]["content"] = "an outside writer"
    path.write_bytes(orjson.dumps(tables))
    data = path.read_bytes()
    with pytest.raises(Exception, match="changed since memtui read it"):
        Store.open(path).undo(tx.id, now=NOW + timedelta(minutes=1))
    assert path.read_bytes() == data
