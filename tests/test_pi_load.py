"""pi stores memtui used to refuse: opened as pi opens them, and nothing memtui did not change
is rewritten."""

from __future__ import annotations

import json
from pathlib import Path

from memtui.model import Memory
from memtui.stores import Change, open_store
from memtui.stores.formats.pi_json import dumps as pi_dumps
from memtui.stores.formats.pi_json import loads as pi_loads
from memtui.times import from_epoch_ms

NOW = from_epoch_ms(1797000000000)
ENTRY = {
    "type": "fact",
    "content": "The build uses pytest",
    "paths": [],
    "potency": 0.6,
    "source": "auto",
    "tags": [],
    "id": "mem_good",
    "createdAt": 1795521600000,
    "lastInjectedAt": 1795521600000,
    "lastDecayedAt": 1795521600000,
    "accessCount": 0,
}


def _store_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "memory-store.json"
    path.write_bytes(text.encode())
    return path


def _edit(path: Path, ident: str) -> None:
    store = open_store(str(path))
    was: Memory = store.get(ident)
    store.commit(
        [Change(was, was.with_(importance=0.9))], actor="user", kind="edit", reason="t", now=NOW
    )


def test_odd_entries_open_marked_and_untouched(tmp_path: Path) -> None:
    odd = {**ENTRY, "id": "mem_odd", "potency": "high", "paths": ["a/", 3], "tags": "x"}
    dropped = {**ENTRY, "id": "mem_drop", "content": 42}
    text = json.dumps({"version": 1, "memories": [odd, dropped, ENTRY]}, indent=2)
    path = _store_file(tmp_path, text)
    store = open_store(str(path))
    shown = {m.id: m for m in store.memories()}
    assert set(shown) == {"mem_odd", "mem_good"}  # the entry pi drops is not shown as one
    assert shown["mem_odd"].importance == 0.8 and shown["mem_odd"].paths == ("a/",)
    header = store.document().header
    assert set(header["normalised"]) == {"mem_odd"}
    assert "potency" in header["normalised"]["mem_odd"]
    [(position, record, why)] = header["unreadable"]
    assert position == 1 and record == dropped and "not text" in why

    _edit(path, "mem_good")
    written = pi_loads(path.read_bytes())["memories"]
    assert written[0] == odd  # the agent's own entry stays exactly as it was
    assert written[1] == dropped  # kept in the file, where it was
    assert written[2]["potency"] == 0.9


def test_a_lone_surrogate_is_read_and_written_unchanged(tmp_path: Path) -> None:
    cut = {**ENTRY, "id": "mem_cut", "content": "ends in half an emoji \\ud83d"}
    body = json.dumps({**ENTRY}, indent=2, ensure_ascii=False)
    text = (
        '{\n  "version": 1,\n  "memories": [\n'
        + json.dumps(cut, indent=2).replace("\\\\ud83d", "\\ud83d")
        + ",\n"
        + body
        + "\n  ]\n}"
    )
    path = _store_file(tmp_path, text)
    store = open_store(str(path))
    assert store.get("mem_cut").content.endswith("\ud83d")
    _edit(path, "mem_good")
    data = path.read_bytes()
    assert b'half an emoji \\ud83d"' in data  # written as pi writes it, still that entry
    assert open_store(str(path)).get("mem_cut").content == store.get("mem_cut").content


def test_evidence_count_zero_reads_as_one(tmp_path: Path) -> None:
    text = json.dumps({"version": 1, "memories": [{**ENTRY, "evidenceCount": 0}]})
    store = open_store(str(_store_file(tmp_path, text)))
    assert store.get("mem_good").evidence_count == 1


def test_an_entry_with_a_lone_surrogate_comes_back_on_undo(tmp_path: Path) -> None:
    cut = {**ENTRY, "id": "mem_cut", "content": "half an emoji \ud83d"}
    path = tmp_path / "memory-store.json"
    path.write_bytes(pi_dumps({"version": 1, "updatedAt": 1, "memories": [cut, ENTRY]}))
    original = path.read_bytes()
    _edit(path, "mem_cut")
    store = open_store(str(path))
    assert store.get("mem_cut").importance == 0.9 and not store.problems()
    store.undo(now=NOW)
    written = pi_loads(path.read_bytes())
    assert written["memories"] == pi_loads(original)["memories"]
    assert b'"half an emoji \\ud83d"' in path.read_bytes()
