"""A commit that never holds a whole store file: the file it replaces is hashed and copied into
its backup a chunk at a time, and the new file is written as it is made — the same bytes, the
same backups, the same refusals as a commit that held both."""

from __future__ import annotations

import gzip
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tinydb import TinyDB

from memtui.model import Memory
from memtui.stores import Change, create_native_store, open_store
from memtui.stores.detect import layout_parts, with_layout
from memtui.stores.file.backups import BackupShelf, SourceChanged
from memtui.stores.file.files import sha256

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def _native(path: Path, n: int) -> Path:
    memories = [
        Memory(id=f"n{i}", content=f"memory {i}", created_at=NOW - timedelta(minutes=i))
        for i in range(n)
    ]
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    return path


def _edit(path: Path, ident: str, content: str, minutes: int = 1) -> None:
    store = open_store(path)
    m = store.get(ident)
    store.commit(
        [Change(m, m.with_(content=content))],
        actor="user",
        kind="edit",
        reason="",
        now=NOW + timedelta(minutes=minutes),
    )


def test_a_big_native_store_is_written_as_one_json_value_with_its_tables_and_its_end(
    tmp_path: Path,
) -> None:
    path = _native(tmp_path / "n.json", 12_001)  # more records than one piece holds
    tables = orjson.loads(path.read_bytes())
    tables = {"_default": {"1": {"x": 1}}, **tables}  # a table TinyDB's own users keep
    path.write_bytes(orjson.dumps(tables) + b"\r\n")
    before = path.read_bytes()

    _edit(path, "n11000", "edited far into the table")

    data = path.read_bytes()
    assert data.endswith(b"}\r\n") and data.count(b"\n") == 1
    written = orjson.loads(data)
    assert list(written) == ["_default", "memories", "journal", "meta"]
    assert written["_default"] == {"1": {"x": 1}}
    changed = {k: v for k, v in written["memories"].items() if v != tables["memories"][k]}
    assert [v["content"] for v in changed.values()] == ["edited far into the table"]
    assert list(written["memories"]) == list(tables["memories"])
    assert len(written["journal"]) == 2
    with TinyDB(path) as db:
        assert len(db.table("memories")) == 12_001
    [backup] = open_store(path).backups()
    assert backup.path.read_bytes() == before
    assert open_store(path).fingerprint == sha256(data)


def test_an_unchanged_store_commits_again_without_being_read_again(tmp_path: Path) -> None:
    path = _native(tmp_path / "n.json", 20)
    store = open_store(path)
    for n in range(3):  # each commit starts from the file the one before wrote
        m = store.get("n1")
        store.commit(
            [Change(m, m.with_(content=f"take {n}"))],
            actor="user",
            kind="edit",
            reason="",
            now=NOW + timedelta(minutes=n),
        )
    assert open_store(path).get("n1").content == "take 2"
    assert [len(b.path.read_bytes()) > 0 for b in open_store(path).backups()] == [True] * 3
    assert open_store(path).fingerprint == sha256(path.read_bytes())


def test_a_backup_the_same_as_a_compressed_one_before_it_is_stored_once(tmp_path: Path) -> None:
    shelf = BackupShelf(tmp_path / "backups", ".json")
    store = tmp_path / "store.json"
    store.write_bytes(b'{"memories":{}}' * 100_000)
    first = shelf.add(store, NOW, 1, sha256(store.read_bytes()))
    shelf.pack([first])
    assert first.path.read_bytes()[:2] == b"\x1f\x8b"

    again = shelf.add(store, NOW + timedelta(minutes=1), 2, sha256(store.read_bytes()))
    assert os.stat(again.path).st_ino == os.stat(first.path).st_ino

    store.write_bytes(b'{"memories":{}}' * 99_999 + b'{"memorieS":{}}')  # the same size
    other = shelf.add(store, NOW + timedelta(minutes=2), 3)
    assert os.stat(other.path).st_ino != os.stat(first.path).st_ino
    assert other.path.read_bytes() == store.read_bytes()
    assert gzip.decompress(first.path.read_bytes()) == b'{"memories":{}}' * 100_000


def test_a_file_that_is_not_the_one_hashed_leaves_no_backup(tmp_path: Path) -> None:
    shelf = BackupShelf(tmp_path / "backups", ".json")
    store = tmp_path / "store.json"
    store.write_bytes(b"{}")
    with pytest.raises(SourceChanged):
        shelf.add(store, NOW, 1, sha256(b"another file"))
    assert shelf.list() == []
    assert sorted(p.name for p in (tmp_path / "backups").iterdir()) == []


def test_a_store_replaced_while_memtui_commits_is_read_again_not_overwritten(
    tmp_path: Path,
) -> None:
    path = _native(tmp_path / "n.json", 20)
    store = open_store(path)
    _edit(path, "n2", "written by another memtui")  # the file is no longer what `store` read
    m = store.get("n1")
    store.commit(
        [Change(m, m.with_(content="ours"))], actor="user", kind="edit", reason="", now=NOW
    )
    reread = open_store(path)
    assert (reread.get("n1").content, reread.get("n2").content) == (
        "ours",
        "written by another memtui",
    )


_TEXT = st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"x"))
_LAYOUTS = st.sampled_from([None, (False, b""), (False, b"\n"), (True, b"\r\n"), (True, b"")])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(_TEXT, st.sampled_from([b"\n", b" \t", b"", b"}\n\n"])), max_size=8),
    _LAYOUTS,
)
def test_a_file_written_a_piece_at_a_time_ends_as_the_whole_would(
    parts: list[bytes], layout: tuple[bool, bytes] | None
) -> None:
    assert b"".join(layout_parts(iter(parts), layout)) == with_layout(b"".join(parts), layout)
