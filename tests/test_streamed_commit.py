"""A commit that never holds a whole store file: the file it replaces is hashed and copied into
its backup a chunk at a time, and the new file is written as it is made — the same bytes, the
same backups, the same refusals as a commit that held both."""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tinydb import TinyDB

from memtui.jsonout import dumps, dumps_in_parts
from memtui.model import Memory
from memtui.service import Service
from memtui.stores import Change, create_native_store, ledger, open_store
from memtui.stores.detect import layout_parts, with_layout
from memtui.stores.file.backups import BackupShelf, SourceChanged
from memtui.stores.file.files import sha256
from memtui.stores.ledger import encoded_entry
from tests.conftest import CliResult

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


def test_a_transaction_just_committed_is_written_and_read_back_as_its_whole_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger, "_CHANGES_A_PART", 7)  # several parts in a small store
    path = _native(tmp_path / "n.json", 40)
    store = open_store(path)
    changes = [
        Change(m, m.with_(content=f"{m.content}, edited", importance=0.25))
        for m in store.memories()[:30]
    ]
    tx = store.commit(changes, actor="user", kind="edit", reason='a "quoted" reason', now=NOW)
    entry = encoded_entry(tx)
    assert b"".join(entry.parts) == orjson.dumps(tx.to_dict())
    per_part = [part.count(b'{"id":"n') for part in entry.parts]  # changes made at once
    assert sum(per_part) == 30 and max(per_part) == 7
    written = orjson.loads(path.read_bytes())["journal"]["2"]
    assert written == tx.to_dict()
    # each part's diffs are let go of once written, and made again alike when asked for
    reread = open_store(path).transactions()[-1]
    assert [c.diff for c in reread.changes] == [c.diff for c in tx.changes]
    assert list(reread.changes) == list(tx.changes)
    assert tx.changes[0].diff == {
        "content": ["memory 0", "memory 0, edited"],
        "importance": [0.8, 0.25],
    }
    assert store.journal_bytes() == len(orjson.dumps(orjson.loads(path.read_bytes())["journal"]))
    # the same store object goes on: its history, an undo and the file it writes then
    [_, again] = store.transactions()
    assert (again.id, again.reason, len(again.changes)) == (2, 'a "quoted" reason', 30)
    store.undo(2, now=NOW + timedelta(minutes=1))
    assert [m.content for m in open_store(path).memories()[:2]] == ["memory 0", "memory 1"]
    assert [t.id for t in open_store(path).transactions()] == [1, 2, 3]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["id", "at", "kind", "z"]), _JSON, max_size=4),
    st.lists(_JSON, max_size=12),
    st.integers(0, 4),
    _JSON,
)
def test_a_journal_entry_written_a_part_at_a_time_is_its_json(
    others: dict[str, object], changes: list[object], where: int, odd: object
) -> None:
    keys = list(others)
    at = min(where, len(keys))
    entry = {k: others[k] for k in keys[:at]} | {"changes": changes}
    entry |= {k: others[k] for k in keys[at:]}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ledger, "_CHANGES_A_PART", 5)
        assert b"".join(ledger.entry_parts(entry)) == orjson.dumps(entry)
        assert b"".join(ledger.entry_parts(odd)) == orjson.dumps(odd)  # not a transaction


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["at", "digest", "z"]), _JSON, max_size=3),
    st.dictionaries(st.text(max_size=3), _JSON, max_size=12),
    st.integers(0, 3),
)
def test_an_object_written_a_part_at_a_time_is_its_json(
    others: dict[str, object], rows: dict[str, object], where: int
) -> None:
    keys = list(others)
    at = min(where, len(keys))
    value = {k: others[k] for k in keys[:at]} | {"entries": rows}
    value |= {k: others[k] for k in keys[at:]}
    written = dumps_in_parts(value, "entries", rows.items(), pairs=True, size=5)
    assert b"".join(written) == orjson.dumps(value)


def test_the_state_memtui_saw_is_written_as_its_json(tmp_path: Path) -> None:
    path = _native(tmp_path / "n.json", 12)
    service = Service()
    service.outside.look(open_store(path))  # the first look records what memtui sees
    [seen] = (path.parent / (path.name + ".memtui")).glob("**/seen.json.gz")
    state = orjson.loads(gzip.decompress(seen.read_bytes()))
    assert sorted(state["entries"]) == sorted(f"n{i}" for i in range(12))
    assert gzip.decompress(seen.read_bytes()) == orjson.dumps(state)


def test_an_agent_writing_while_the_file_is_made_is_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memtui.stores.formats.native import NativeFormat

    path = _native(tmp_path / "n.json", 30)
    real = NativeFormat.render_parts
    calls = []

    def agent_writes_meanwhile(self: NativeFormat, doc: Any, now: Any) -> Any:
        calls.append(1)
        parts = real(self, doc, now)
        yield next(parts)
        if len(calls) == 1:  # the agent rewrites one entry while memtui makes its file
            tables = orjson.loads(path.read_bytes())
            (record,) = (r for r in tables["memories"].values() if r["id"] == "n5")
            record["content"] = "the agent's rewrite"
            agent = path.with_name("agent.tmp")
            agent.write_bytes(orjson.dumps(tables))
            os.replace(agent, path)
        yield from parts

    monkeypatch.setattr(NativeFormat, "render_parts", agent_writes_meanwhile)
    _edit(path, "n1", "ours")
    after = open_store(path)
    assert (after.get("n1").content, after.get("n5").content) == ("ours", "the agent's rewrite")
    assert len(calls) == 2  # made again on the file as the agent left it
    [backup] = after.backups()
    assert b"the agent's rewrite" in backup.path.read_bytes()


def test_a_value_orjson_refuses_has_the_whole_file_written_in_one_style(tmp_path: Path) -> None:
    import json

    path = tmp_path / "n.json"
    memories = [
        Memory(id=f"n{i}", content=f"memory {i}", extra={"weight": 1e-05}) for i in range(5100)
    ]
    memories[5050] = memories[5050].with_(content="a cut emoji \ud83d")  # a lone surrogate
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    store = open_store(path)
    changes = [Change(m, m.with_(content=m.content + "!")) for m in store.memories()[:600]]
    changes.append(Change(store.get("n5050"), store.get("n5050").with_(content="cut again \ud83d")))
    store.commit(changes, actor="user", kind="edit", reason="", now=NOW + timedelta(minutes=1))

    data = path.read_bytes()
    assert data == dumps(json.loads(data))  # one writer's numbers throughout
    assert data.count(b'"weight":1e-05') == 5100
    reread = open_store(path)
    assert reread.get("n5050").content == "cut again \ud83d"
    [_, tx] = reread.transactions()
    assert len(tx.changes) == 601
    assert tx.changes[600].before["content"] == "a cut emoji \ud83d"
    entry = encoded_entry(tx)
    assert not entry.plain and entry.value() == tx.to_dict()
    reread.undo(2, now=NOW + timedelta(minutes=2))
    assert open_store(path).get("n3").content == "memory 3"


@pytest.mark.parametrize("levels", [249, 250, 251, 252, 253])
def test_a_value_as_deep_as_orjson_writes_has_the_file_written_in_one_style(
    tmp_path: Path, levels: int
) -> None:
    import json

    deep: Any = 1
    for _ in range(levels):
        deep = [deep]
    path = tmp_path / "n.json"
    memories = [Memory(id=f"n{i}", content=f"memory {i}", extra={"w": 1e-05}) for i in range(3)]
    memories[2] = memories[2].with_(extra={"w": 1e-05, "deep": deep})
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    _edit(path, "n1", "edited")
    data = path.read_bytes()
    assert data == dumps(json.loads(data))
    assert open_store(path).get("n2").extra["deep"] == deep


def test_an_entry_too_deep_for_orjson_with_a_cut_emoji_is_edited_undone_and_compacted(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    deep: Any = 1
    for _ in range(980):
        deep = [deep]
    path = tmp_path / "q.json"
    memories = [Memory(id=f"n{i}", content=f"memory {i}") for i in range(3)]
    memories[2] = memories[2].with_(content="cut \ud83d", extra={"deep": deep})
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    assert cli("edit", path, "n2", "--content", "edited deep").code == 0
    undone = cli("undo", path)
    assert (undone.code, undone.err) == (0, "")
    assert open_store(path).get("n2").content == "cut \ud83d"
    assert cli("compact", path, "--keep", "1").code == 0
    kept, levels = open_store(path).get("n2").extra["deep"], 0
    while isinstance(kept, list):  # (== on 980 levels would recurse past Python's limit)
        kept, levels = kept[0], levels + 1
    assert (kept, levels) == (1, 980)
