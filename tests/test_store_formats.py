"""Reading the three formats, and writing them back without losing anything."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tinydb import TinyDB

from memtui.model import Memory, Source, Status
from memtui.stores import Change, create_native_store, export_store, open_store
from tests.conftest import FIXTURES, NOW


def test_pi_fixture_reads_with_pi_defaults() -> None:
    store = open_store(FIXTURES / "example-store.json")
    assert store.format_name == "pi"
    assert len(store) == 5
    tenured = store.get("mem_mx1tnnak_a73461d3")
    assert tenured.tenured and tenured.access_count == 50
    assert tenured.category == "decision" and tenured.paths == ("src/auth/",)
    user = store.get("mem_mx1tnnak_3ebb985c")
    assert user.source is Source.USER and user.importance == 0.9
    first = store.get("mem_mx1tnnaj_c9effc14")
    assert first.extra == {"sourceSession": "sess-1"}
    assert first.created_at == datetime(2026, 11, 29, 12, 35, 5, 515000, tzinfo=UTC)


def test_longterm_items_map_statuses_and_lineage() -> None:
    store = open_store(FIXTURES / "items.jsonl")
    assert store.format_name == "longterm"
    by_id = {m.id: m for m in store.memories()}
    assert by_id["4"].status is Status.SUPERSEDED and by_id["4"].superseded_by == "5"
    assert by_id["5"].supersedes == ("4",)
    assert by_id["11"].status is Status.QUARANTINED
    assert by_id["12"].status is Status.DELETED
    assert by_id["1"].updated_at is None  # Go's zero time means unset
    assert by_id["1"].embedding == (0.916982, 0.319469, 0.091295, 0.22079)
    assert by_id["6"].extra == {"slot_hint": "safety"}


def test_longterm_memory_record_layout_uses_memory_id() -> None:
    store = open_store(FIXTURES / "records.jsonl")
    assert [m.id for m in store.memories()] == ["1", "2", "3"]
    assert store.get("2").extra["embedding_model"] == "text-embedding-3-small"


def test_longterm_json_array_layout(tmp_path: Path) -> None:
    records = [json.loads(line) for line in (FIXTURES / "items.jsonl").read_text().splitlines()]
    path = tmp_path / "items.json"
    path.write_text(json.dumps(records, indent=2, ensure_ascii=False))
    store = open_store(path)
    assert store.format_name == "longterm" and len(store) == 12
    memory = store.get("3")
    store.commit(
        [Change(memory, memory.with_(importance=0.2))],
        actor="user",
        kind="edit",
        reason="t",
        now=NOW,
    )
    again = json.loads(path.read_text())
    assert isinstance(again, list) and again[2]["importance"] == 0.2
    assert again[:2] == records[:2] and again[3:] == records[3:]


@pytest.mark.parametrize("name", ["example-store.json", "realistic-store.json"])
def test_export_pi_to_pi_is_the_same_file(name: str, tmp_path: Path) -> None:
    source = FIXTURES / name
    dest = tmp_path / "out.json"
    export_store(open_store(source), dest, "pi", NOW)
    assert json.loads(dest.read_bytes()) == json.loads(source.read_bytes())
    # pi's own layout: 2-space indented JSON, private to its owner
    assert dest.read_bytes() == source.read_bytes()
    assert dest.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("name", ["items.jsonl", "records.jsonl"])
def test_export_longterm_to_longterm_keeps_every_key(name: str, tmp_path: Path) -> None:
    source = FIXTURES / name
    dest = tmp_path / "out.jsonl"
    export_store(open_store(source), dest, "longterm-jsonl", NOW)
    read = [json.loads(line) for line in source.read_text().splitlines()]
    written = [json.loads(line) for line in dest.read_text().splitlines()]
    assert written == read
    assert dest.read_bytes() == source.read_bytes()


def test_native_store_is_a_tinydb_database(tmp_path: Path) -> None:
    memories = [Memory(id=f"m{i}", content=f"fact number {i}", user_id="u") for i in range(3)]
    path = tmp_path / "n.json"
    store = create_native_store(path, memories, now=NOW, kind="import", reason="test")
    assert store.format_name == "native" and len(store) == 3
    db = TinyDB(path)
    try:
        assert sorted(d["content"] for d in db.table("memories").all()) == [
            "fact number 0",
            "fact number 1",
            "fact number 2",
        ]
        assert db.table("meta").all()[0]["memtui_schema"] == 1
        assert db.table("journal").all()[0]["kind"] == "import"
    finally:
        db.close()


def test_export_between_formats_round_trips_through_native(tmp_path: Path) -> None:
    source = open_store(FIXTURES / "realistic-store.json")
    native = tmp_path / "n.json"
    export_store(source, native, "native", NOW)
    back = tmp_path / "back.json"
    export_store(open_store(native), back, "pi", NOW)
    original = json.loads((FIXTURES / "realistic-store.json").read_bytes())["memories"]
    assert json.loads(back.read_bytes())["memories"] == original


def test_export_to_longterm_renumbers_string_ids(tmp_path: Path) -> None:
    dest = tmp_path / "lt.jsonl"
    report = export_store(open_store(FIXTURES / "example-store.json"), dest, "longterm-jsonl", NOW)
    assert report.renumbered and report.written == 5
    rows = [json.loads(line) for line in dest.read_text().splitlines()]
    assert [r["id"] for r in rows] == [1, 2, 3, 4, 5]
    assert rows[0]["memtui_id"] == "mem_mx1tnnaj_c9effc14"
    assert open_store(dest).get("1").content.startswith("PPT")


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40)
_when = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1), timezones=st.just(UTC)
)
_memories = st.builds(
    Memory,
    id=st.from_regex(r"[a-z0-9_]{1,12}", fullmatch=True),
    content=_text,
    category=st.sampled_from(["fact", "preference", "decision", "identity", "general"]),
    importance=st.floats(0, 1),
    source=st.sampled_from(list(Source)),
    tags=st.lists(_text, max_size=3).map(tuple),
    paths=st.lists(_text, max_size=2).map(tuple),
    created_at=st.none() | _when,
    last_accessed_at=st.none() | _when,
    last_decayed_at=st.none() | _when,
    updated_at=st.none() | _when,
    access_count=st.integers(0, 10_000),
    evidence_count=st.none() | st.integers(1, 50),
    tenured=st.booleans(),
    user_id=st.none() | _text,
    status=st.sampled_from(list(Status)),
    supersedes=st.lists(st.from_regex(r"[0-9]{1,4}", fullmatch=True), max_size=2).map(tuple),
    embedding=st.none() | st.lists(st.floats(-1, 1), min_size=1, max_size=4).map(tuple),
    version=st.none() | st.integers(0, 99),
    extra=st.dictionaries(st.sampled_from(["sourceSession", "slot_hint", "x"]), _text, max_size=2),
)


@pytest.mark.parametrize("fixture", ["example-store.json", "items.jsonl"])
@settings(max_examples=150, deadline=None)
@given(memory=_memories)
def test_what_a_format_writes_reads_back_as_its_visible_form(fixture: str, memory: Memory) -> None:
    store = open_store(FIXTURES / fixture)
    fmt = store.format
    visible = store.visible(memory)
    raw = fmt.encode(memory, None)
    if visible is None:
        assert not fmt.keeps(memory)
        return
    assert raw is not None
    decoded = fmt.decode(json.loads(json.dumps(raw)), store.path)
    assert decoded.with_(superseded_by=memory.superseded_by) == visible
    # what survives is what the user wrote
    assert (visible.content, visible.tags, visible.importance) == (
        memory.content,
        memory.tags,
        memory.importance,
    )
