"""An open store's records kept packed (`Records`) behave as the dict of records they replace,
and a big native store read a slice of its records at a time opens as the store read whole:
the same entries in the same order, the same records, the same bytes written back — also
where the slices cannot be trusted (a nested object that looks like a record boundary, a
record key twice), which are then read whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.model import Memory
from memtui.stores import open_store
from memtui.stores.file.store import Change, Store
from memtui.stores.formats import native
from memtui.stores.formats.records import Records
from memtui.stores.transfer import create_native_store

NOW = "2026-12-01T00:00:00Z"
_KEYS = st.sampled_from(["id", "content", "tags", "extra", "x"])
_VALUES = st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers()))
_RECORDS = st.dictionaries(_KEYS, _VALUES, max_size=5)
_OPS = st.lists(
    st.tuples(st.sampled_from(["set", "pop", "del", "copy"]), st.sampled_from("abcd"), _RECORDS),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(_OPS)
def test_records_behave_as_a_dict_of_records(ops: list[tuple[str, str, dict[str, Any]]]) -> None:
    packed, model = Records(), {}
    copies: list[tuple[Records, dict[str, dict[str, Any]]]] = []
    for op, ident, record in ops:
        if op == "set":
            packed[ident], model[ident] = dict(record), dict(record)
        elif op == "pop":
            assert packed.pop(ident, None) == model.pop(ident, None)
        elif op == "del" and ident in model:
            del packed[ident], model[ident]
        elif op == "copy":
            copies.append((packed.copy(), {k: dict(v) for k, v in model.items()}))
    for records, expected in [(packed, model), *copies]:
        assert list(records) == list(expected)
        assert len(records) == len(expected)
        for ident, record in expected.items():
            assert ident in records
            got = records[ident]
            assert got == record and list(got) == list(record)  # key order kept
            assert records.get(ident) == record
        assert records.get("z") is None and "z" not in records


def test_a_record_read_is_a_copy_and_changes_by_being_set() -> None:
    records = Records({"a": {"id": "a", "content": "x"}})
    got = records["a"]
    got["content"] = "changed in place"
    assert records["a"]["content"] == "x"
    records["a"] = got
    assert records["a"]["content"] == "changed in place"
    other = records.copy()
    assert records.same_as(other, "a")
    other["a"] = {"id": "a", "content": "changed in place"}  # equal values, set again
    assert records.same_as(other, "a")
    other["a"] = {"id": "a", "content": "y"}
    assert not records.same_as(other, "a") and not records.same_as(other, "b")
    with pytest.raises(TypeError):
        records["b"] = ["not", "a", "record"]  # type: ignore[assignment]


def _store(tmp_path: Path, n: int, extra: dict[str, Any] | None = None) -> Path:
    memories = [
        Memory(
            f"m{k:05d}",
            f"entry {k} says something {'long ' * (k % 7)}",
            user_id=f"u{k % 3}",
            extra=dict(extra or {}),
        )
        for k in range(n)
    ]
    path = tmp_path / "store.json"
    create_native_store(path, memories, now=_time(), kind="import", reason="test")
    return path


def _time() -> Any:
    from memtui.times import parse_iso

    return parse_iso(NOW)


def _opened(path: Path, slice_bytes: int, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setattr(native, "_SLICE_BYTES", slice_bytes)
    store = open_store(path)
    assert isinstance(store, Store)
    return store


def _same_store(sliced: Store, whole: Store) -> None:
    a, b = sliced.document(), whole.document()
    assert list(a.memories) == list(b.memories)
    assert a.memories == b.memories
    assert all(list(a.raws[i].items()) == list(b.raws[i].items()) for i in b.raws)
    assert a.header == b.header
    assert sliced.format.render(a, None) == whole.format.render(b, None)


def test_a_big_native_store_read_in_slices_is_the_store_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _store(tmp_path, 400)
    data = path.read_bytes()
    monkeypatch.setattr(native, "_SLICE_BYTES", 2000)
    sliced = native._record_slices(data)
    assert sliced is not None and len(sliced[0]) > 10  # read in slices indeed
    assert native.NativeFormat().recognise_bytes(data, path) is not None
    whole = _opened(path, 1 << 40, monkeypatch)
    _same_store(_opened(path, 2000, monkeypatch), whole)
    assert whole.format.render(whole.document(), None) == data


def test_a_store_opened_in_slices_commits_and_undoes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memtui.service import Service

    path = _store(tmp_path, 300)
    original = _opened(path, 1 << 40, monkeypatch).memories()
    store = _opened(path, 2000, monkeypatch)
    changes = [Change(m, m.with_(content=m.content + " (edited)")) for m in original[::7]]
    tx = store.commit(changes, actor="user", kind="edit", reason="test", now=_time())
    edited = _opened(path, 2000, monkeypatch)
    assert edited.get("m00007").content.endswith("(edited)")
    assert edited.get("m00008").content == original[8].content
    _same_store(edited, _opened(path, 1 << 40, monkeypatch))
    Service().history.undo(edited, tx.id)
    assert _opened(path, 2000, monkeypatch).memories() == original


def test_a_nested_object_like_a_record_boundary_reads_the_store_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `},"7":{` inside every record's extra: a slice cut there is not JSON
    path = _store(tmp_path, 300, {"a": {}, "7": {"z": 1}})
    data = path.read_bytes()
    assert b'{"a":{},"7":{"z":1}}' in data
    monkeypatch.setattr(native, "_SLICE_BYTES", 1500)
    assert native.NativeFormat().recognise_bytes(data, path) is None
    _same_store(_opened(path, 1500, monkeypatch), _opened(path, 1 << 40, monkeypatch))


def test_a_record_key_twice_reads_as_the_whole_file_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _store(tmp_path, 300)
    value = orjson.loads(path.read_bytes())
    table = value["memories"]
    first_key = next(iter(table))
    late = orjson.dumps(table["250"]).decode()
    data = path.read_bytes().replace(
        b'"250":' + late.encode(), b'"' + first_key.encode() + b'":' + late.encode()
    )
    path.write_bytes(data)
    whole = _opened(path, 1 << 40, monkeypatch)
    assert len(whole.memories()) == 299  # the file's JSON keeps the last of the two
    monkeypatch.setattr(native, "_SLICE_BYTES", 2000)
    assert native.NativeFormat().recognise_bytes(data, path) is None
    _same_store(_opened(path, 2000, monkeypatch), whole)


def test_a_store_with_a_journal_of_many_transactions_is_still_read_in_slices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _store(tmp_path, 400)
    store = _opened(path, 1 << 40, monkeypatch)
    for k in range(30):  # the journal's keys 1, 2, …: no cut is made among them
        m = store.get(f"m{k:05d}")
        store.commit([Change(m, m.with_(content=f"edit {k}"))], **_EDIT)
    data = path.read_bytes()
    monkeypatch.setattr(native, "_SLICE_BYTES", 2000)
    assert native.NativeFormat().recognise_bytes(data, path) is not None
    sliced = _opened(path, 2000, monkeypatch)
    _same_store(sliced, _opened(path, 1 << 40, monkeypatch))
    assert len(sliced.transactions()) == 31


_EDIT: dict[str, Any] = {"actor": "user", "kind": "edit", "reason": "test", "now": _time()}


def test_a_record_refused_in_a_slice_but_replaced_later_opens_as_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a hand-edited file: key "5" early holds a damaged record, key "5" again late the good one
    path = _store(tmp_path, 300)
    data = path.read_bytes()
    table = orjson.loads(data)["memories"]
    good, late = orjson.dumps(table["5"]), orjson.dumps(table["200"])
    bad = orjson.dumps({**table["5"], "content": 12})
    data = data.replace(b'"5":' + good, b'"5":' + bad, 1)
    data = data.replace(b'"200":' + late, b'"5":' + good, 1)
    path.write_bytes(data)
    whole = _opened(path, 1 << 40, monkeypatch)
    assert whole.get(orjson.loads(good)["id"]).content == orjson.loads(good)["content"]
    _same_store(_opened(path, 1500, monkeypatch), whole)


def test_journal_images_made_later_survive_an_interrupted_making_and_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from memtui.stores import ledger

    path = _store(tmp_path, 50)
    store = _opened(path, 1 << 40, monkeypatch)
    edits = [Change(m, m.with_(content=m.content + " (edited)")) for m in store.memories()[:20]]
    store.commit(edits, **_EDIT)
    real = ledger.resolve_images
    calls = []

    def interrupted(*args: Any) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        real(*args)

    monkeypatch.setattr(ledger, "resolve_images", interrupted)
    tx = _opened(path, 1 << 40, monkeypatch).transactions()[-1]
    with pytest.raises(KeyboardInterrupt):
        _ = tx.changes[0].after
    seen: list[Any] = []
    threads = [
        threading.Thread(target=lambda c=c: seen.append((c.lost, c.before, c.after)))
        for c in tx.changes
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 2  # made once more, for every thread
    assert len(seen) == 20 and not any(lost for lost, _, _ in seen)
    assert all(b["content"] + " (edited)" == a["content"] for _, b, a in seen)
